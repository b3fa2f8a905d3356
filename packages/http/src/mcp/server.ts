import { randomUUID } from "node:crypto";
import { Validator } from "@cfworker/json-schema";
import {
  type CacheHint,
  type CallToolResult,
  type InputRequiredResult,
  type jsonSchemaValidator,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type Server,
} from "@modelcontextprotocol/server";
import { hasPermission, type Permission, requiredRole } from "@toolbus/core/app/access";
import type { CallOutcome, CallService } from "@toolbus/core/app/calls/service";
import type { McpFederation } from "@toolbus/core/app/federation/service";
import type { SearchService } from "@toolbus/core/app/search/service";
import type { SelectionService } from "@toolbus/core/app/selection/service";
import type { StageConfig } from "@toolbus/core/config";
import { callerMessage, type Issue, ToolbusError, ValidationError } from "@toolbus/core/errors";
import type { CatalogStore, McpSubscriptions } from "@toolbus/core/ports";
import { sha256Hex } from "@toolbus/core/util/canonical-json";
import type { McpSurface } from "@toolbus/wire/mcp-surface";
import { CALL_TOOL, SEARCH_TOOLS } from "@toolbus/wire/mcp-surface";
import type { Principal } from "@toolbus/wire/model/call";
import { callId as callIdSchema, runId as runIdSchema } from "@toolbus/wire/model/ids";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import { API_VERSION } from "../common/version";
import { federate } from "./federated";
import { ReadableParamsServer } from "./params";
import {
  type CallRelay,
  callRelay,
  type McpRelay,
  roundCodec,
  type StreamWriter,
} from "./relayed-call";
import { callToolResult, invalidInputResult } from "./results";
import { callToolArguments, SEARCH_SURFACE_TOOLS, searchToolsResult } from "./search-surface";
import { toMcpTool, toolInput } from "./tools";

/** Where a `tools/call` may name its call id: `params._meta["toolbus/callId"]`. */
export const CALL_ID_META = "toolbus/callId";
/** Where a `tools/list` result says which version of the caller's list it is. */
const LIST_VERSION_META = "toolbus/listVersion";
/** Where a `tools/call` may name its run: `params._meta["toolbus/runId"]`. */
const RUN_ID_META = "toolbus/runId";

/** What one MCP request is made on behalf of; the route reads it from the HTTP request. */
export interface McpRequestContext {
  principal: Principal;
  /** Already resolved against the stage's modes. */
  mode: string;
  /**
   * From `X-Toolbus-Run-Id`: the run this request's calls belong to; `_meta` wins over it.
   * Without either, see `runOf`.
   */
  runId?: string;
  /** From `X-Toolbus-Call-Id`; `_meta` wins over it. */
  callId?: string;
  /** `catalog`: every tool the selection offers; `search`: `search_tools` and `call_tool` only. */
  surface: McpSurface;
  /** Records an unexpected failure; the caller only ever sees a generic message. */
  logFailure(error: unknown): void;
  /**
   * Writes on this answer's event stream (2025-11-25, when the caller reads one): how a
   * registered server's requests reach the caller mid-call. Absent for a JSON answer.
   */
  write?: StreamWriter;
  /** Fires when the caller of a streamed answer hangs up (with `write`). */
  hungUp?: AbortSignal;
}

/** What the server reads and calls; the route builds it once for every request. */
export interface McpDeps {
  config: StageConfig;
  catalog: Pick<CatalogStore, "getTool">;
  calls: Pick<CallService, "call">;
  selection: SelectionService;
  search: SearchService;
  /**
   * Prompts, resources and completions of the registered MCP servers the caller may use;
   * without it the prompts and resources lists are empty (2026-07-28) or absent (2025-11-25).
   */
  federation?: McpFederation;
  /** Resource subscriptions (2025-11-25, with the federation): without them, none are offered. */
  subscriptions?: McpSubscriptions;
  /**
   * The relay between running calls and the caller waiting on `/mcp`: their progress, log
   * messages and servers' requests. Without it nothing reaches the caller mid-call.
   */
  relay?: McpRelay;
}

/**
 * The SDK's default is Ajv, which the bundles leave out (see `stacks/bundling.ts`); the
 * server only validates with it what it asks a client for, which Toolbus never does. The
 * JSON Schema validator the registered tools already use stands in.
 */
const SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: object) {
    const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0]);
    return (input: unknown) => {
      const { valid, errors } = validator.validate(input);
      return valid
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: errors.map((e) => e.error).join("; ") };
    };
  },
};

/** A `tools/call` answer: the call's result, or (2026-07-28) what the caller must answer first. */
type ToolAnswer = CallToolResult | InputRequiredResult;

/** Which protocol generation a request speaks: 2025-11-25 and before, or 2026-07-28. */
export type McpEra = "legacy" | "modern";

/** The same for every caller and request: a client may keep it an hour, and share it. */
const CONSTANT: CacheHint = { ttlMs: 3_600_000, cacheScope: "public" };

/**
 * An MCP server for one request (stateless: nothing outlives the request, so it runs the same
 * on Lambda). Tools come from the catalog at request time with their stored JSON Schemas,
 * which is why this uses the low-level `Server` rather than `McpServer` (zod schemas only).
 */
export function createMcpServer(deps: McpDeps, context: McpRequestContext, era: McpEra): Server {
  const modern = era === "modern";
  // The registered servers' prompts and resources, on the catalog surface; the search surface
  // stays the same two tools for everyone.
  const federation = context.surface === "catalog" ? deps.federation : undefined;
  // Lists made for this caller from live servers are private, kept as long as `tools/list`.
  const federatedHint: CacheHint = {
    ttlMs: deps.config.mcp.toolsListTtlSeconds * 1000,
    cacheScope: "private",
  };
  const listHint = federation ? federatedHint : CONSTANT;
  const server = new ReadableParamsServer(
    { name: "toolbus", title: "Toolbus", version: API_VERSION },
    {
      // 2026-07-28 clients ask every server for its lists (the `caching` rules): prompts and
      // resources are always offered there (empty without federation); 2025 clients see them
      // when the registered servers' are federated, with completions, and logging (whose
      // level is accepted and answered empty: stateless, Toolbus keeps none, and a call's log
      // messages reach the caller on the call's own stream, see relayed-call.ts).
      capabilities: {
        tools: { listChanged: false },
        ...(modern || federation
          ? {
              prompts: {},
              resources: federation && !modern && deps.subscriptions ? { subscribe: true } : {},
            }
          : {}),
        ...(federation ? { completions: {} } : {}),
        ...(federation && !modern ? { logging: {} } : {}),
      },
      instructions:
        "Optional tools: use one when it clearly helps with the task, and carry on without it " +
        "when it does not or when it fails.",
      jsonSchemaValidator: SCHEMA_VALIDATOR,
      cacheHints: {
        "server/discover": CONSTANT,
        "prompts/list": listHint,
        "resources/list": listHint,
        "resources/templates/list": listHint,
        ...(federation ? { "resources/read": federatedHint } : {}),
      },
      // A 2026-07-28 round's state names the call it continues, sealed and bound to the
      // caller (relayed-call.ts); without the relay Toolbus hands out none, so any is forged.
      requestState: {
        verify: (state, ctx) => {
          if (!deps.relay) throw new Error("Toolbus issues no requestState here.");
          return roundCodec(deps.relay).verify(state, ctx);
        },
      },
    },
  );
  // Cache hints travel in 2026-07-28 results only; a 2025 result stays as it was.
  const hinted = <R extends object>(result: R, hint: CacheHint) =>
    modern ? { ...result, ...hint } : result;

  server.setRequestHandler("tools/list", async () => {
    requirePermission(deps, context.principal, "read");
    // The same two tools for everyone, whatever the catalog holds.
    if (context.surface === "search") return hinted({ tools: SEARCH_SURFACE_TOOLS }, CONSTANT);
    try {
      const {
        catalog,
        selection: { available },
      } = await deps.selection.select(context.principal, { mode: context.mode });
      // What a caller may use changes with the catalog, the capabilities, and its own key: a
      // client keeps the list only for itself, and only as long as the stage says. The list's
      // version (the catalog's, and what this caller may use of it) shows when it changed.
      const version = sha256Hex(
        `${catalog.version}\n${available.map((tool) => tool.id).join("\n")}`,
      ).slice(0, 16);
      return hinted(
        { tools: available.map(toMcpTool), _meta: { [LIST_VERSION_META]: version } },
        { ttlMs: deps.config.mcp.toolsListTtlSeconds * 1000, cacheScope: "private" },
      );
    } catch (error) {
      throw protocolError(error, context);
    }
  });

  if (federation) {
    federate(server, federation, {
      caller: context,
      era,
      ...(deps.relay ? { relay: deps.relay } : {}),
      ...(deps.subscriptions ? { subscriptions: deps.subscriptions } : {}),
      allowed: (permission) => requirePermission(deps, context.principal, permission),
      failure: (error) => protocolError(error, context),
    });
  } else if (modern) {
    server.setRequestHandler("prompts/list", async () => ({ prompts: [] }));
    server.setRequestHandler("resources/list", async () => ({ resources: [] }));
    server.setRequestHandler("resources/templates/list", async () => ({ resourceTemplates: [] }));
    server.setRequestHandler("resources/read", async (request) => {
      throw new ResourceNotFoundError(request.params.uri);
    });
  }

  server.setRequestHandler("tools/call", async (request, ctx): Promise<ToolAnswer> => {
    const { name, arguments: args, _meta } = request.params;
    if (context.surface === "search" && name === SEARCH_TOOLS) {
      requirePermission(deps, context.principal, "read");
      try {
        return await searchToolsResult(deps.search, context, args);
      } catch (error) {
        throw protocolError(error, context);
      }
    }
    requirePermission(deps, context.principal, "call");
    if (context.surface === "search") {
      // Exactly the two tools it lists: a catalog tool is reached through call_tool only.
      if (name !== CALL_TOOL)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}.`);
      const target = callToolArguments(args);
      if ("refused" in target) return target.refused;
      return callCatalogTool(deps, context, {
        name: target.tool,
        input: () => target.input,
        meta: _meta,
        again: `Call ${CALL_TOOL} again with the same arguments`,
        inputPath: "arguments",
        relay: () => callRelay(deps.relay, context, ctx, era),
      });
    }
    return callCatalogTool(deps, context, {
      name,
      input: (spec) => toolInput(spec, args),
      meta: _meta,
      relay: () => callRelay(deps.relay, context, ctx, era),
    });
  });

  return server;
}

/**
 * One catalog tool called for the agent, by name: the same call path, selection, budgets and
 * events whichever surface it came through.
 */
async function callCatalogTool(
  deps: McpDeps,
  context: McpRequestContext,
  target: {
    name: string;
    /** The tool's input, from the arguments as this surface carries them. */
    input: (spec: ToolSpec) => unknown;
    meta: Record<string, unknown> | undefined;
    again?: string;
    /** Where the tool's input sits in the arguments, for the paths of its issues. */
    inputPath?: string;
    /** How the call reaches its caller while it runs (relayed-call.ts). */
    relay: () => Promise<CallRelay | undefined>;
  },
): Promise<ToolAnswer> {
  const { meta } = target;
  const relay = await target.relay();
  // A retried 2026-07-28 round continues the call its sealed state names.
  const namedCall = relay?.resumes?.callId ?? idFrom(meta, CALL_ID_META) ?? context.callId;
  const callId = namedCall ?? randomUUID();
  const runId =
    relay?.resumes?.runId ?? runOf(context, idFrom(meta, RUN_ID_META, runIdSchema), namedCall);
  try {
    const spec = await deps.catalog.getTool(target.name);
    if (!spec)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${target.name}.`);
    let outcome: CallOutcome;
    const call = () =>
      deps.calls.call(
        context.principal,
        runId,
        {
          tool: spec.id,
          input: target.input(spec),
          callId,
          mode: context.mode,
          // An MCP client holds the request open for the result: the longest wait the stage
          // allows; one still running comes back with its id to call again.
          wait: deps.config.calls.maxWaitSeconds,
        },
        // W3C trace context in `_meta`, as MCP clients that trace send it.
        typeof meta?.traceparent === "string" ? meta.traceparent : undefined,
      );
    try {
      if (!relay) {
        outcome = await call();
      } else {
        const key = { parentRunId: runId, callId };
        const relayed = await relay.run(key, call);
        // The server asked the caller something: the call waits while the caller answers.
        if ("asked" in relayed) return relay.ask(key, relayed.asked);
        outcome = relayed.done;
      }
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return invalidInputResult(
        spec,
        { runId, callId },
        error.message,
        inputIssues(error.details),
        target.inputPath,
      );
    }
    // A server's own JSON-RPC error reaches an MCP caller as the server sent it (a missing
    // client capability stays -32021, HTTP 400 on 2026-07-28), not as a failed result.
    const upstream = outcome.call.result?.failure?.mcpError;
    if (outcome.finished && upstream) {
      throw new ProtocolError(
        upstream.code,
        outcome.call.result?.failure?.message ?? "",
        upstream.data,
      );
    }
    return callToolResult(outcome.call, spec, target.again);
  } catch (error) {
    throw protocolError(error, context, { runId, callId });
  }
}

/** The REST routes' rule (app/access.ts), refused in JSON-RPC's shape. */
function requirePermission(deps: McpDeps, principal: Principal, permission: Permission): void {
  if (!hasPermission(deps.config, principal, permission)) {
    const required = requiredRole(deps.config, permission);
    const what = permission === "call" ? "Calling tools" : "Listing tools";
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `${what} needs the ${required} role or higher.`,
      {
        code: "forbidden",
        requiredRole: required,
      },
    );
  }
}

/**
 * The run a call belongs to: the one the client names (`_meta`, then the header), else, for a
 * call it names, a run derived from its key and that call id, so a stateless client that
 * repeats the call (after an approval, or when its wait ran out) reaches the same call
 * without keeping anything but the call id; else a new run.
 */
function runOf(
  context: McpRequestContext,
  named: string | undefined,
  callId: string | undefined,
): string {
  const chosen = named ?? context.runId;
  if (chosen !== undefined) return chosen;
  if (callId === undefined) return `mcp-${randomUUID()}`;
  return `mcp-${sha256Hex(`${context.principal.id}\n${callId}`).slice(0, 32)}`;
}

/** An id a client put in `_meta` under `key`: valid, or a protocol error saying what is. */
function idFrom(
  meta: Record<string, unknown> | undefined,
  key: typeof CALL_ID_META | typeof RUN_ID_META,
  schema: typeof callIdSchema | typeof runIdSchema = callIdSchema,
): string | undefined {
  const value = meta?.[key];
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `_meta "${key}" must be 1-128 characters: letters, digits, . _ : -`,
    );
  }
  return parsed.data;
}

/**
 * Errors as JSON-RPC errors. A refusal written for callers (unknown tool, not offered in this
 * mode or to this role, a call id reused with other input) keeps its words and code; anything
 * unexpected is logged and answered with a generic message, so nothing internal leaks.
 */
function protocolError(
  error: unknown,
  context: McpRequestContext,
  call?: { runId: string; callId: string },
): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof ToolbusError && error.status < 500) {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, {
      code: error.code,
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }
  if (error instanceof ToolbusError && error.status === 503) {
    return new ProtocolError(ProtocolErrorCode.InternalError, callerMessage(error), {
      code: error.code,
      retryable: true,
      ...(call ?? {}),
    });
  }
  context.logFailure(error);
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    "Something went wrong on our side; retry later.",
    {
      code: "internal",
    },
  );
}

function inputIssues(details: unknown): Issue[] {
  if (!Array.isArray(details)) return [];
  return details.filter(
    (detail): detail is Issue =>
      typeof detail?.path === "string" && typeof detail?.message === "string",
  );
}
