import {
  type CallToolResult,
  Client,
  type ClientCapabilities,
  type CompleteRequest,
  type FetchLike,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type Tool,
} from "@modelcontextprotocol/client";
import type { Failure } from "@toolbus/wire/model/call";
import {
  MCP_PROTOCOLS,
  type McpProtocol,
  type SecretHeader,
} from "@toolbus/wire/model/implementation";
import {
  type AttachedCaller,
  CAPABILITY_OF,
  type LogLevel,
  logLevel,
  RELAYED_METHODS,
  type RelayCapabilities,
  type RelayedMethod,
} from "@toolbus/wire/model/relay";
import * as z from "zod";
import { OutboundError } from "../outbound/errors";
import { failureFromOutbound, failureFromStatus } from "../outbound/failures";
import type { HttpClient, OutboundResponse, SecretSource } from "../outbound/types";
import { type ToolCaller, ToolFailure } from "../tool-definition";
import { compileSchema } from "./json-schema";
import { RemoteRefusal } from "./remote-refusal";
import { authHeaders } from "./secrets";

/** A tool as a remote MCP server lists it. */
export type RemoteTool = Tool;
export type { McpProtocol };

export interface McpConnection {
  url: string;
  /** Headers sent with every request (the auth header, value already read). */
  headers: Record<string, string>;
  http: HttpClient;
  /** For messages: which server this is, e.g. "toolset weather (mcp.example.com)". */
  upstream: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * The connection to a registered MCP server, built the same way wherever Toolbus talks to
 * one (a tool's call, discovery at registration, the federated prompts and resources): the
 * outbound client (SSRF guard, size caps), and the auth header read from its secret now.
 * `owner` names the tool or toolset in a refusal about the secret.
 */
export function mcpConnection(
  server: { url: string; auth?: SecretHeader | undefined },
  access: { secret: SecretSource; http: HttpClient },
  options: { owner: string; upstream?: string; timeoutMs: number; signal?: AbortSignal },
): McpConnection {
  return {
    url: server.url,
    headers: authHeaders(server.auth, access.secret, options.owner),
    http: access.http,
    upstream: options.upstream ?? `${options.owner} (${hostOf(server.url)})`,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** Host of a URL for messages: never its path or query, which may hold tokens. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the URL";
  }
}

const LEGACY: McpProtocol = "2025-11-25";
const MODERN: McpProtocol = "2026-07-28";

/** The generations a registered server speaks: as discovery recorded them, or 2025-11-25. */
export function protocolsOf(implementation: {
  protocols?: readonly McpProtocol[] | undefined;
}): McpProtocol[] {
  const spoken = implementation.protocols?.filter((p) => MCP_PROTOCOLS.includes(p)) ?? [];
  return spoken.length > 0 ? [...new Set(spoken)] : [LEGACY];
}

/** The newest generation of those a server speaks. */
export function newestProtocol(implementation: {
  protocols?: readonly McpProtocol[] | undefined;
}): McpProtocol {
  const spoken = protocolsOf(implementation);
  return [...MCP_PROTOCOLS].reverse().find((p) => spoken.includes(p)) ?? LEGACY;
}

/**
 * The generation one call speaks to a registered server: the live caller's own when the
 * server speaks it (a "legacy" caller speaks 2025-11-25, a "modern" one 2026-07-28), so what
 * the server asks of its client reaches the caller in the caller's terms; otherwise, and with
 * no live caller, the newest the server speaks.
 */
export function protocolFor(
  caller: Pick<AttachedCaller, "era"> | undefined,
  implementation: { protocols?: readonly McpProtocol[] | undefined },
): McpProtocol {
  if (caller) {
    const own = caller.era === "modern" ? MODERN : LEGACY;
    if (protocolsOf(implementation).includes(own)) return own;
  }
  return newestProtocol(implementation);
}

const CLIENT_INFO = { name: "toolbus", version: "1" };
/**
 * The SDK checks structured results against the output schemas a listing gave. Its default
 * checker is Ajv, which the bundles leave out (see `stacks/bundling.ts`). Its own cfworker
 * checker (`@modelcontextprotocol/client/validators/cf-worker`) carries a second copy of
 * cfworker (~22 KB): this one is our own schema checks', on the same library.
 */
const VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const check = compileSchema(schema as Record<string, unknown>);
    return (input) => {
      const issues = check.issues(input, 5);
      if (issues.length === 0) return { valid: true, data: input as T, errorMessage: undefined };
      const errorMessage = issues.map((issue) => `${issue.path || "/"}: ${issue.message}`);
      return { valid: false, data: undefined, errorMessage: errorMessage.join("; ") };
    };
  },
};
const MAX_PAGES = 20;
/** Most `input_required` rounds one call goes through before it fails. */
const MAX_INPUT_ROUNDS = 10;
/** The SDK's own progress steps while it fulfils `input_required` rounds: not the server's. */
const SDK_ROUND_PROGRESS = /^Fulfilling input required by '/;

/** What passes between one session and the live caller of the call it serves. */
interface SessionRelay {
  caller: ToolCaller;
  /** The client capabilities the caller declared: exactly those the session declares. */
  capabilities: RelayCapabilities;
}

interface SessionOptions {
  protocol: McpProtocol;
  relay?: SessionRelay | undefined;
  /** Capabilities declared with no handler behind them (a round handed back to the caller). */
  capabilities?: RelayCapabilities | undefined;
  /**
   * 2026-07-28 only: an `input_required` answer is not fulfilled here; a request that allows
   * it gets it back as sent.
   */
  manualInput?: boolean;
}

/** What the outbound fetch saw of the exchange, for the failure it becomes. */
interface Seen {
  response?: Pick<OutboundResponse, "status" | "headers">;
  error?: unknown;
}

/** Errors our relay handlers threw for a caller's error answer: the caller's, not the server's. */
const relayedErrors = new WeakSet<object>();

/**
 * Runs `work` in one MCP session over `protocol` and closes it. Every byte goes through the
 * outbound client (SSRF guard per hop, timeouts, size caps); HTTP and transport failures come
 * out as the tool failure an agent can act on, so callers only handle ToolFailure.
 */
async function withSession<T>(
  connection: McpConnection,
  session: SessionOptions,
  work: (client: Client) => Promise<T>,
): Promise<T> {
  const seen: Seen = {};
  const transport = new StreamableHTTPClientTransport(new URL(connection.url), {
    fetch: outboundFetch(connection, seen),
    requestInit: { headers: connection.headers },
  });
  const client = new Client(CLIENT_INFO, {
    capabilities: (session.relay?.capabilities ?? session.capabilities ?? {}) as ClientCapabilities,
    jsonSchemaValidator: VALIDATOR,
    versionNegotiation: { mode: session.protocol === MODERN ? { pin: MODERN } : "legacy" },
    inputRequired: { autoFulfill: !session.manualInput, maxRounds: MAX_INPUT_ROUNDS },
  });
  if (session.relay) relayTo(client, session.relay);
  if (session.protocol === MODERN) completeByDefault(transport);
  try {
    await client.connect(transport, requestOptions(connection));
    return await work(client);
  } catch (error) {
    if (error instanceof RemoteRefusal) throw error;
    throw asToolFailure(error, seen, connection.upstream);
  } finally {
    // Stateful servers keep a session per initialize: end ours (best effort), then close.
    await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

/**
 * On 2026-07-28 a result names its kind (`resultType`), and the SDK refuses one without it.
 * Servers built on the v1 SDK that answer `server/discover` (the conformance suite's reference
 * server among them) leave it out of their results: such a result is read as complete, as the
 * SDK reads it from an earlier generation's server, rather than fail a call the server ran.
 */
function completeByDefault(transport: StreamableHTTPClientTransport): void {
  type Receiver = NonNullable<StreamableHTTPClientTransport["onmessage"]>;
  let receive: Receiver | undefined;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => receive,
    set(next: Receiver | undefined) {
      receive = next && ((message, ...rest) => next(completed(message), ...rest));
    },
  });
}

function completed<M>(message: M): M {
  if (typeof message !== "object" || message === null || !("result" in message)) return message;
  const { result } = message as { result: unknown };
  if (typeof result !== "object" || result === null || Array.isArray(result)) return message;
  if ("resultType" in result) return message;
  return { ...message, result: { ...result, resultType: "complete" } };
}

/**
 * The server's requests of its client go to the caller, each only when the caller declared
 * its capability (the session declares no other); its log messages are told to it.
 */
function relayTo(client: Client, relay: SessionRelay): void {
  for (const method of RELAYED_METHODS) {
    if (relay.capabilities[CAPABILITY_OF[method]] === undefined) continue;
    const handler = async (
      request: { params?: unknown },
      context?: { mcpReq?: { id?: unknown } },
    ) => {
      const params = (request.params ?? {}) as Record<string, unknown>;
      // The server's name for it: a 2026-07-28 server's inputRequests key, or the JSON-RPC id.
      const id = context?.mcpReq?.id;
      const key = typeof id === "string" || typeof id === "number" ? String(id) : undefined;
      const answer = await relay.caller.ask(method, params, key);
      if ("error" in answer) {
        const { code, message, data } = answer.error;
        const error = new ProtocolError(code, message, data);
        relayedErrors.add(error);
        throw error;
      }
      return answer.result;
    };
    // One handler for the three methods: the SDK checks params and result against each one's
    // schema, so the union it types them with is not needed here.
    (client.setRequestHandler as (method: RelayedMethod, handler: unknown) => void)(
      method,
      handler,
    );
  }
  client.setNotificationHandler("notifications/message", (notification) => {
    const { level, logger, data } = notification.params;
    const parsed = logLevel.safeParse(level);
    if (!parsed.success) return;
    relay.caller.tell({
      kind: "log",
      level: parsed.data,
      ...(typeof logger === "string" ? { logger } : {}),
      data,
    });
  });
}

/** Every page of a list, following cursors, at most MAX_PAGES pages. */
async function pages<T>(
  page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  enough: (items: T[]) => boolean,
): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let count = 0; count < MAX_PAGES; count++) {
    const answer = await page(cursor);
    items.push(...answer.items);
    cursor = answer.nextCursor;
    if (!cursor) return { items, more: false };
    if (enough(items)) break;
  }
  return { items, more: true };
}

/** `tools/list` page by page (the SDK's own listTools would walk every page at once). */
async function toolsOf(client: Client, connection: McpConnection, limit: number) {
  const { items } = await pages(
    async (cursor) => {
      const answer = await client.request(
        { method: "tools/list", params: cursor ? { cursor } : {} },
        { timeout: connection.timeoutMs },
      );
      return { items: answer.tools, nextCursor: answer.nextCursor };
    },
    (tools) => tools.length > limit,
  );
  return items;
}

/**
 * Every tool the server lists (following cursors), at most `limit` + 1 to detect overflow,
 * over `protocol` (default 2025-11-25).
 */
export async function listRemoteTools(
  connection: McpConnection,
  limit: number,
  protocol: McpProtocol = LEGACY,
): Promise<RemoteTool[]> {
  return withSession(connection, { protocol, capabilities: RELAYABLE }, (client) =>
    toolsOf(client, connection, limit),
  );
}

/**
 * What Toolbus declares when it lists a server's tools: every capability it can relay to a
 * caller, so a server that offers some tools only to clients able to answer its requests
 * lists them. A call declares only what its own caller did; a server that then lacks the
 * capability it needs refuses the call itself.
 */
const RELAYABLE: RelayCapabilities = { elicitation: {}, sampling: {}, roots: {} };

/** What discovery at registration found: the server's tools, and the generations it speaks. */
export interface RemoteDiscovery {
  /** As `listRemoteTools` lists them, over the newest generation the server speaks. */
  tools: RemoteTool[];
  /** Oldest first; never empty. */
  protocols: McpProtocol[];
}

/**
 * Which generations the server speaks, and its tools over the newest: 2026-07-28 when
 * `server/discover` answers, 2025-11-25 when `initialize` does. A server that answers neither
 * fails as `listRemoteTools` would (with the 2025-11-25 attempt's failure); one that cannot be
 * reached or does not answer in time fails at once, without the second attempt.
 */
export async function discoverRemoteTools(
  connection: McpConnection,
  limit: number,
): Promise<RemoteDiscovery> {
  let modern: RemoteTool[] | undefined;
  try {
    modern = await listRemoteTools(connection, limit, MODERN);
  } catch (error) {
    if (unreachable(error)) throw error;
  }
  if (modern === undefined) {
    return { tools: await listRemoteTools(connection, limit, LEGACY), protocols: [LEGACY] };
  }
  const legacy = await withSession(connection, { protocol: LEGACY }, async () => true).catch(
    () => false,
  );
  return { tools: modern, protocols: legacy ? [LEGACY, MODERN] : [MODERN] };
}

/** A failure another attempt at the same server would only repeat (and wait for again). */
function unreachable(error: unknown): boolean {
  if (!(error instanceof ToolFailure)) return true;
  return error.failure.kind === "timeout" || error.cause instanceof OutboundError;
}

/** A tool call's relation to the call that runs it. */
export interface RemoteCall {
  /** The generations the server speaks (the tool's `implementation.protocols`). */
  protocols?: readonly McpProtocol[] | undefined;
  /** The call's live MCP caller: what the server asks of its client goes to it. */
  caller?: ToolCaller | undefined;
  /** The server's progress notifications for the call, as they are read. */
  onProgress?: ((progress: number, total?: number, message?: string) => void) | undefined;
  /** The server runs the tool only as a task (2025-11-25): call it as one, and poll it. */
  asTask?: boolean | undefined;
}

/**
 * `tools/call` on the server, over the generation `protocolFor` picks for the live caller.
 *
 * - The session declares exactly the client capabilities the caller declared (none without
 *   one), and the server's elicitation, sampling and roots requests (or, on 2026-07-28, the
 *   `input_required` rounds that carry them) are asked of the caller; an error it answers
 *   goes back to the server as that JSON-RPC error.
 * - The server's log messages are told to the caller. The caller's log level goes to the
 *   server when it set one: in the request's `_meta` on 2026-07-28, by `logging/setLevel` on
 *   2025-11-25 (when the server declared logging).
 * - With `onProgress`, the request asks for progress and the server's progress notifications
 *   are handed over as they are read; each one also restarts the request's timeout (the
 *   tool's own timeout still bounds the call through `signal`).
 */
export async function callRemoteTool(
  connection: McpConnection,
  name: string,
  input: unknown,
  call: RemoteCall = {},
): Promise<CallToolResult> {
  const caller = call.caller ? await call.caller.describe().catch(() => undefined) : undefined;
  const protocol = protocolFor(caller, { protocols: call.protocols });
  const relay =
    call.caller && caller ? { caller: call.caller, capabilities: caller.capabilities } : undefined;
  const level: LogLevel | undefined = caller?.logLevel;
  const { onProgress } = call;
  return withSession(connection, { protocol, relay }, async (client) => {
    if (level && protocol === LEGACY && client.getServerCapabilities()?.logging) {
      await client.setLoggingLevel(level, requestOptions(connection));
    }
    if (call.asTask && protocol === LEGACY) {
      return callAsTask(client, connection, name, input);
    }
    const result = await client.callTool(
      {
        name,
        arguments: (input ?? {}) as Record<string, unknown>,
        ...(level && protocol === MODERN ? { _meta: { [LOG_LEVEL_META_KEY]: level } } : {}),
      },
      {
        ...requestOptions(connection),
        ...(onProgress
          ? {
              onprogress: (step: { progress: number; total?: number; message?: string }) => {
                if (step.message !== undefined && SDK_ROUND_PROGRESS.test(step.message)) return;
                onProgress(step.progress, step.total, step.message);
              },
              resetTimeoutOnProgress: true,
            }
          : {}),
      },
    );
    return result as CallToolResult;
  });
}

/** A task as a 2025-11-25 server reports it: what polling it needs. */
const remoteTask = z.looseObject({
  taskId: z.string().min(1).max(1024),
  status: z.enum(["working", "input_required", "completed", "failed", "cancelled"]),
  pollInterval: z.number().int().positive().optional(),
  statusMessage: z.string().optional(),
});
const createdTask = z.looseObject({ task: remoteTask });
const callToolAnswer = z.looseObject({ content: z.array(z.unknown()).default([]) });

/** Polls no faster than this, whatever a server suggests, and no slower than the longest. */
const TASK_POLL_MS = { least: 100, most: 5_000, default: 1_000 };

/**
 * A tool its server runs only as a task (2025-11-25): `tools/call` with `task`, then
 * `tasks/get` at the interval the server asks until the task needs input or ends, then
 * `tasks/result` (which carries the server's requests for input to the caller, through this
 * session's relay, and answers with the tool's result or its JSON-RPC error). Stopped (the
 * call's timeout or a cancel): the task is cancelled on the server too.
 */
async function callAsTask(
  client: Client,
  connection: McpConnection,
  name: string,
  input: unknown,
): Promise<CallToolResult> {
  const options = requestOptions(connection);
  const created = await client.request(
    {
      method: "tools/call",
      params: {
        name,
        arguments: (input ?? {}) as Record<string, unknown>,
        task: { ttl: connection.timeoutMs },
      },
    } as never,
    createdTask,
    options,
  );
  const { taskId } = created.task;
  let task = created.task;
  try {
    while (task.status === "working") {
      const wait = Math.min(
        Math.max(task.pollInterval ?? TASK_POLL_MS.default, TASK_POLL_MS.least),
        TASK_POLL_MS.most,
      );
      await abortableDelay(wait, connection.signal);
      task = await client.request(
        { method: "tasks/get", params: { taskId } } as never,
        remoteTask,
        options,
      );
    }
    return (await client.request(
      { method: "tasks/result", params: { taskId } } as never,
      callToolAnswer,
      options,
    )) as CallToolResult;
  } catch (error) {
    if (connection.signal?.aborted) {
      // The server stops its work too; its answer does not matter any more.
      await client
        .request({ method: "tasks/cancel", params: { taskId } } as never, z.unknown(), {
          timeout: 2_000,
        })
        .catch(() => undefined);
    }
    throw error;
  }
}

function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** What a remote server offers besides tools, as its capabilities declared and its lists gave. */
export interface RemoteOfferings {
  capabilities: { prompts: boolean; resources: boolean; completions: boolean };
  prompts: Record<string, unknown>[];
  resources: Record<string, unknown>[];
  resourceTemplates: Record<string, unknown>[];
  /** A list that had more than `limit` entries or pages than MAX_PAGES: cut there. */
  truncated: boolean;
}

/**
 * One federated request's generation, and on 2026-07-28 its round: the `inputResponses` and
 * `requestState` a previous `input_required` answer asked for, passed on in the params.
 */
export interface RemoteRound {
  /** Default 2025-11-25. */
  protocol?: McpProtocol | undefined;
  /**
   * The client capabilities the caller declared, declared to the server in turn: on
   * 2026-07-28 a server asks only for input its client declared it can give.
   */
  capabilities?: RelayCapabilities | undefined;
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
}

/** A 2026-07-28 answer that needs the caller's input first, as the server sent it. */
export interface RemoteInputRequired {
  resultType: "input_required";
  inputRequests?: Record<string, unknown>;
  requestState?: string;
  [key: string]: unknown;
}

/**
 * The prompts, resources and resource templates a server lists, in one session, asking only
 * for what its capabilities declare (none of them is not an error: empty lists). Each list
 * follows cursors up to MAX_PAGES pages and keeps at most `limit` entries.
 */
export async function listRemoteOfferings(
  connection: McpConnection,
  limit: number,
  round: Pick<RemoteRound, "protocol"> = {},
): Promise<RemoteOfferings> {
  const protocol = round.protocol ?? LEGACY;
  return withSession(connection, { protocol }, async (client) => {
    const declared = client.getServerCapabilities() ?? {};
    const capabilities = {
      prompts: declared.prompts !== undefined,
      resources: declared.resources !== undefined,
      completions: declared.completions !== undefined,
    };
    let truncated = false;
    const all = async <T>(
      page: (
        cursor: string | undefined,
      ) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
    ): Promise<T[]> => {
      const { items, more } = await pages(page, (items) => items.length >= limit);
      if (more || items.length > limit) truncated = true;
      return items.slice(0, limit);
    };
    const options = { timeout: connection.timeoutMs };
    const params = (cursor: string | undefined) => (cursor ? { cursor } : {});
    const prompts = capabilities.prompts
      ? await all(async (cursor) => {
          const answer = await client.request(
            { method: "prompts/list", params: params(cursor) },
            options,
          );
          return { items: answer.prompts, nextCursor: answer.nextCursor };
        })
      : [];
    const resources = capabilities.resources
      ? await all(async (cursor) => {
          const answer = await client.request(
            { method: "resources/list", params: params(cursor) },
            options,
          );
          return { items: answer.resources, nextCursor: answer.nextCursor };
        })
      : [];
    // Templates are optional to a server with resources: one that does not know the method
    // has none.
    const resourceTemplates = capabilities.resources
      ? await all(async (cursor) => {
          const answer = await client.request(
            { method: "resources/templates/list", params: params(cursor) },
            options,
          );
          return { items: answer.resourceTemplates, nextCursor: answer.nextCursor };
        }).catch((error: unknown) => {
          if (error instanceof ProtocolError && error.code === ProtocolErrorCode.MethodNotFound) {
            return [];
          }
          throw error;
        })
      : [];
    return {
      capabilities,
      prompts: prompts as Record<string, unknown>[],
      resources: resources as Record<string, unknown>[],
      resourceTemplates: resourceTemplates as Record<string, unknown>[],
      truncated,
    };
  });
}

/**
 * `resources/read` on the server, its result as sent. Over 2026-07-28 an `input_required`
 * answer is returned as sent, for the caller to answer in the next round.
 */
export async function readRemoteResource(
  connection: McpConnection,
  uri: string,
  round: RemoteRound = {},
): Promise<Record<string, unknown>> {
  const protocol = round.protocol ?? LEGACY;
  const { capabilities } = round;
  return withSession(connection, { protocol, manualInput: true, capabilities }, (client) =>
    refusedAs(
      connection,
      client.readResource({ uri, ...roundParams(round, protocol) } as { uri: string }, {
        ...requestOptions(connection),
        ...manualRound(protocol),
        cacheMode: "bypass",
      }),
    ),
  );
}

/**
 * `prompts/get` on the server, its result as sent. Over 2026-07-28 an `input_required`
 * answer is returned as sent, for the caller to answer in the next round.
 */
export async function getRemotePrompt(
  connection: McpConnection,
  name: string,
  args: Record<string, string> | undefined,
  round: RemoteRound = {},
): Promise<Record<string, unknown>> {
  const protocol = round.protocol ?? LEGACY;
  const { capabilities } = round;
  return withSession(connection, { protocol, manualInput: true, capabilities }, (client) =>
    refusedAs(
      connection,
      client.getPrompt(
        {
          name,
          ...(args === undefined ? {} : { arguments: args }),
          ...roundParams(round, protocol),
        },
        { ...requestOptions(connection), ...manualRound(protocol) },
      ),
    ),
  );
}

/** `completion/complete` on the server, its result as sent. */
export async function completeRemote(
  connection: McpConnection,
  params: CompleteRequest["params"],
  round: Pick<RemoteRound, "protocol"> = {},
): Promise<Record<string, unknown>> {
  return withSession(connection, { protocol: round.protocol ?? LEGACY }, (client) =>
    refusedAs(connection, client.complete(params, requestOptions(connection))),
  );
}

/** The round's answers in a request's params: on 2026-07-28 only, as given. */
function roundParams(round: RemoteRound, protocol: McpProtocol): Record<string, unknown> {
  if (protocol !== MODERN) return {};
  return {
    ...(round.inputResponses === undefined ? {} : { inputResponses: round.inputResponses }),
    ...(round.requestState === undefined ? {} : { requestState: round.requestState }),
  };
}

/** On 2026-07-28 an `input_required` answer comes back as sent. */
function manualRound(protocol: McpProtocol): { allowInputRequired?: true } {
  return protocol === MODERN ? { allowInputRequired: true } : {};
}

/** A JSON-RPC error the server answered (not a timeout) as a RemoteRefusal, with its code. */
async function refusedAs<T>(connection: McpConnection, answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof ProtocolError && !relayedErrors.has(error)) {
      throw new RemoteRefusal(error.code, error.message, connection.upstream);
    }
    throw error;
  }
}

function requestOptions(connection: McpConnection) {
  return {
    timeout: connection.timeoutMs,
    ...(connection.signal ? { signal: connection.signal } : {}),
  };
}

/**
 * The SDK's fetch, served by the outbound client. A POST's answer is streamed when the client
 * can stream (`open`): an event stream's progress, log messages and requests are read as they
 * arrive. GET (the optional server-to-client event stream) answers 405 without a request:
 * Toolbus only makes request/response exchanges, and an open stream would hold the call until
 * its timeout.
 */
function outboundFetch(connection: McpConnection, seen: Seen): FetchLike {
  return async (url, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    if (method !== "POST" && method !== "DELETE") return new Response(null, { status: 405 });
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      headers[key] = value;
    });
    // The SDK aborts its own signal when it is done with a stream (or closes): that is no
    // failure of the exchange.
    const own = init?.signal ?? undefined;
    const signals = [connection.signal, own].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const request = {
      method: method as "POST" | "DELETE",
      headers,
      ...(typeof init?.body === "string" ? { body: init.body } : {}),
      timeoutMs: connection.timeoutMs,
      ...(signal ? { signal } : {}),
    };
    const failed = (error: unknown) => {
      if (method === "POST" && !own?.aborted) seen.error = error;
    };
    const answered = (status: number, headersIn: Headers) => {
      if (status >= 400 && method === "POST") seen.response = { status, headers: headersIn };
      const headersOut = new Headers(headersIn);
      // The outbound client has already decoded the body.
      headersOut.delete("content-encoding");
      headersOut.delete("content-length");
      return headersOut;
    };
    const open = connection.http.open?.bind(connection.http);
    if (method === "POST" && open) {
      let stream: Awaited<ReturnType<typeof open>>;
      try {
        stream = await open(String(url), request);
      } catch (error) {
        failed(error);
        throw error;
      }
      const headersOut = answered(stream.status, stream.headers);
      if ([204, 205, 304].includes(stream.status)) {
        await stream.body.cancel().catch(() => undefined);
        return new Response(null, { status: stream.status, headers: headersOut });
      }
      return new Response(watched(stream.body, failed), {
        status: stream.status,
        headers: headersOut,
      });
    }
    let response: OutboundResponse;
    try {
      response = await connection.http.request(String(url), { ...request, retries: 0 });
    } catch (error) {
      failed(error);
      throw error;
    }
    const headersOut = answered(response.status, response.headers);
    const empty = response.body.byteLength === 0 || [204, 205, 304].includes(response.status);
    return new Response(empty ? null : response.body, {
      status: response.status,
      headers: headersOut,
    });
  };
}

/** `body` as it arrives, with its failure (too large, idle, aborted) reported to `failed`. */
function watched(
  body: ReadableStream<Uint8Array>,
  failed: (error: unknown) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        failed(error);
        controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** A JSON-RPC error in an HTTP error's body, as a 2026-07-28 server answers with 400. */
function rpcErrorIn(text: unknown): { code: number; message: string; data?: unknown } | undefined {
  if (typeof text !== "string" || text.length > 100_000) return undefined;
  try {
    const body = JSON.parse(text) as { jsonrpc?: unknown; error?: Record<string, unknown> };
    const error = body?.error;
    if (body?.jsonrpc !== "2.0" || typeof error !== "object" || error === null) return undefined;
    if (!Number.isInteger(error.code)) return undefined;
    return {
      code: error.code as number,
      message: typeof error.message === "string" ? error.message : "",
      ...("data" in error ? { data: error.data } : {}),
    };
  } catch {
    return undefined;
  }
}

function mcpErrorOf(error: { code: number; data?: unknown }): NonNullable<Failure["mcpError"]> {
  return { code: error.code, ...(error.data === undefined ? {} : { data: error.data }) };
}

function asToolFailure(error: unknown, seen: Seen, upstream: string): ToolFailure {
  if (error instanceof ToolFailure) return error;
  if (error instanceof ProtocolError && relayedErrors.has(error)) {
    return fail(
      "upstream_error",
      `${upstream} asked the caller for input, which it refused: ${error.message}`,
      false,
      "replan",
    );
  }
  if (seen.error instanceof OutboundError) return failureFromOutbound(seen.error, upstream);
  if (error instanceof ProtocolError) {
    const mcpError = mcpErrorOf(error);
    if (error.code === ProtocolErrorCode.InvalidParams) {
      return fail(
        "upstream_error",
        `${upstream} refused the call: ${error.message}`,
        false,
        "correct_call",
        mcpError,
      );
    }
    return fail(
      "upstream_error",
      `${upstream} answered with an error: ${error.message}`,
      false,
      "replan",
      mcpError,
    );
  }
  if (seen.response) {
    // failureFromStatus reads only the status and its headers (Retry-After).
    const byStatus = failureFromStatus(seen.response as OutboundResponse, upstream);
    const rpc =
      error instanceof SdkHttpError && error.status >= 400 && error.status < 500
        ? rpcErrorIn(error.data.text)
        : undefined;
    if (byStatus && rpc) {
      const words = rpc.message ? `: ${rpc.message}` : "";
      return new ToolFailure({
        ...byStatus.failure,
        message: `${byStatus.failure.message.replace(/\.$/, "")}${words}`.slice(0, 1000),
        mcpError: mcpErrorOf(rpc),
      });
    }
    if (byStatus) return byStatus;
  }
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
    return fail("timeout", `${upstream} did not answer in time.`, true, "replan");
  }
  return fail(
    "upstream_error",
    `${upstream} did not answer as an MCP server: ${(error as Error)?.message ?? String(error)}`,
    false,
    "replan",
  );
}

function fail(
  kind: Failure["kind"],
  message: string,
  retryable: boolean,
  recovery: Failure["recovery"],
  mcpError?: Failure["mcpError"],
): ToolFailure {
  return new ToolFailure({
    kind,
    message: message.slice(0, 1000),
    retryable,
    recovery,
    ...(mcpError ? { mcpError } : {}),
  });
}
