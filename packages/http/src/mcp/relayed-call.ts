import { createHash, randomBytes } from "node:crypto";
import {
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  type InputRequiredResult,
  type InputRequiredSpec,
  inputRequired,
  LOG_LEVEL_META_KEY,
  type RequestStateCodec,
  type ServerContext,
} from "@modelcontextprotocol/server";
import type { CallChannel, CallKey } from "@toolbus/core/ports";
import {
  type AttachedCaller,
  logLevel,
  type RelayCapabilities,
  type RelayRequest,
} from "@toolbus/wire/model/relay";
import { type CallerStream, type Relayed, relayId, relayWhile } from "./relay";

/** How `/mcp` reaches the relay, and how its round state is sealed. */
export interface McpRelay {
  channel: CallChannel;
  /**
   * The secret a 2026-07-28 round's state is sealed with (HMAC), the same on every instance
   * that may take the retried call; read when first needed.
   */
  stateSecret: () => string | undefined;
  /**
   * The answer reaches the caller only once it ends (API Gateway buffers it): a 2025-11-25
   * caller then gets plain JSON and no request mid-call, since it could not see one in time.
   */
  buffered?: boolean;
}

/**
 * What a 2026-07-28 round's state holds: for a tool call, the call it continues and the
 * requests it asked; for a federated prompt or resource, the server's own state, passed back
 * to it with the retry (sealed inside Toolbus's, so the server's is never taken unverified).
 */
type RoundState =
  | { kind: "call"; runId: string; callId: string; asked: Record<string, string> }
  | { kind: "server"; target: string; state?: string };

/** Rounds a caller may take before answering: the same ten minutes the SDK's codec allows. */
const ROUND_SECONDS = 600;

/** Writes a JSON-RPC message on the answer's event stream, related to the request it answers. */
export type StreamWriter = (message: Record<string, unknown>) => Promise<void>;

/**
 * One `tools/call`'s side of the relay, from its request: who the caller is (its generation,
 * what it can be asked, what it wants to hear) and how messages reach it. Undefined where
 * nothing can reach the caller (a 2025-11-25 answer in plain JSON): the call's requests are
 * then refused at once, as for a REST caller.
 */
export interface CallRelay {
  /** The run and call a retried 2026-07-28 round continues, from its verified state. */
  resumes?: { runId: string; callId: string };
  /** `stays`: whether the caller stays attached after this answer (see relayWhile). */
  run<T>(key: CallKey, call: () => Promise<T>, stays?: (done: T) => boolean): Promise<Relayed<T>>;
  /** The `input_required` answer that hands the asked requests to the caller. */
  ask(key: CallKey, asked: readonly RelayRequest[]): Promise<InputRequiredResult>;
}

const codecs = new WeakMap<McpRelay, { secret: string; codec: RequestStateCodec<RoundState> }>();

/** The codec rounds are sealed with, bound to the caller: another key's state is refused. */
export function roundCodec(relay: McpRelay): RequestStateCodec<RoundState> {
  const secret = relay.stateSecret() ?? processSecret;
  let made = codecs.get(relay);
  if (!made || made.secret !== secret) {
    made = {
      secret,
      codec: createRequestStateCodec<RoundState>({
        // Its own key, derived: the secret it comes from is never used for two things.
        key: createHash("sha256").update(`toolbus mcp round state\n${secret}`).digest(),
        ttlSeconds: ROUND_SECONDS,
        bind: (ctx) => {
          // Every /mcp request is a key's (the route authenticates first); none is anonymous.
          const clientId = ctx.http?.authInfo?.clientId;
          if (!clientId) throw new Error("A round's state is bound to a key, and none is known.");
          return clientId;
        },
      }),
    };
    codecs.set(relay, made);
  }
  return made.codec;
}

/** Where no stage secret is set, rounds hold within this process only. */
const processSecret = randomBytes(32).toString("hex");

/** The relay of one call, or undefined where nothing can reach its caller. */
export async function callRelay(
  relay: McpRelay | undefined,
  context: {
    principal: { id: string };
    write?: StreamWriter;
    hungUp?: AbortSignal;
    declared?: RelayCapabilities;
  },
  ctx: ServerContext,
  era: "legacy" | "modern",
): Promise<CallRelay | undefined> {
  if (!relay) return undefined;
  const principalId = context.principal.id;
  const { write, hungUp } = context;
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const token =
    typeof progressToken === "string" || typeof progressToken === "number"
      ? progressToken
      : undefined;
  const notify: CallerStream["notify"] = (notification) => ctx.mcpReq.notify(notification);
  if (era === "legacy") {
    // Requests and messages need the event stream: a caller answered in JSON gets neither.
    if (!write || relay.buffered) return undefined;
    const caller: AttachedCaller = {
      principalId,
      era,
      capabilities: legacyCapabilities(context.declared),
      // Stateless: no level was set for this request, so every message goes.
      logLevel: "debug",
      progress: token !== undefined,
    };
    return {
      run: (key, call) =>
        relayWhile(
          relay.channel,
          key,
          caller,
          {
            notify,
            request: (request) =>
              write({
                jsonrpc: "2.0",
                id: relayId(key, request.id),
                method: request.method,
                params: request.params,
              }),
          },
          call,
          token,
          hungUp ? AbortSignal.any([hungUp, ctx.mcpReq.signal]) : ctx.mcpReq.signal,
        ),
      ask: () => Promise.reject(new Error("A 2025-11-25 caller is asked on its stream.")),
    };
  }
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const level = logLevel.safeParse(envelope[LOG_LEVEL_META_KEY]);
  const caller: AttachedCaller = {
    principalId,
    era,
    capabilities: declared(envelope[CLIENT_CAPABILITIES_META_KEY]),
    ...(level.success ? { logLevel: level.data } : {}),
    progress: token !== undefined,
  };
  const codec = roundCodec(relay);
  const sealed = ctx.mcpReq.requestState<RoundState>();
  const state = sealed?.kind === "call" ? sealed : undefined;
  if (state) await answerRound(relay.channel, state, principalId, ctx.mcpReq.inputResponses);
  return {
    ...(state ? { resumes: { runId: state.runId, callId: state.callId } } : {}),
    run: (key, call, stays) =>
      relayWhile(relay.channel, key, caller, { notify }, call, token, undefined, stays),
    ask: async (key, asked) => {
      const named = roundNames(asked);
      return inputRequired({
        // As the server asked them: their params were checked by the client that took them.
        inputRequests: Object.fromEntries(
          asked.map((request) => [
            named.get(request.id) as string,
            { method: request.method, params: request.params },
          ]),
        ) as InputRequiredSpec["inputRequests"],
        requestState: await codec.mint(
          {
            kind: "call",
            runId: key.parentRunId,
            callId: key.callId,
            asked: Object.fromEntries([...named].map(([id, name]) => [name, id])),
          },
          ctx,
        ),
      });
    },
  };
}

/**
 * A retried round's answers, handed to the requests they answer. One missing stays waiting
 * and is asked again; answers to requests the round did not ask are ignored.
 */
async function answerRound(
  channel: CallChannel,
  state: Extract<RoundState, { kind: "call" }>,
  principalId: string,
  responses: Record<string, unknown> | undefined,
): Promise<void> {
  const key = { parentRunId: state.runId, callId: state.callId };
  for (const [name, id] of Object.entries(state.asked)) {
    const response = responses?.[name];
    if (response === null || typeof response !== "object" || Array.isArray(response)) continue;
    await channel.answer(key, id, principalId, { result: response as Record<string, unknown> });
  }
}

/**
 * What each request of a round is called in the caller's `inputRequests`: the server's own
 * name when it gave one that no other request of the round has, else Toolbus's id.
 */
export function roundNames(asked: readonly RelayRequest[]): Map<string, string> {
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const request of asked) {
    const name = request.key !== undefined && !taken.has(request.key) ? request.key : request.id;
    taken.add(name);
    names.set(request.id, name);
  }
  return names;
}

/**
 * What a 2025-11-25 caller reading the stream may be asked: what its `initialize` declared,
 * as its session id carries it (session-id.ts). A request without one that reads carries no
 * capabilities, so such a caller may be asked anything, and one that cannot answer says so
 * in JSON-RPC's terms.
 */
export function legacyCapabilities(declaredInSession?: RelayCapabilities): RelayCapabilities {
  return declaredInSession ?? { elicitation: {}, sampling: {}, roots: {} };
}

/** The capabilities a 2026-07-28 caller declared that a server may ask about. */
export function declared(value: unknown): RelayCapabilities {
  if (value === null || typeof value !== "object") return {};
  const capabilities: RelayCapabilities = {};
  for (const name of ["elicitation", "sampling", "roots"] as const) {
    const declaration = (value as Record<string, unknown>)[name];
    if (declaration !== null && typeof declaration === "object" && !Array.isArray(declaration)) {
      capabilities[name] = declaration as Record<string, unknown>;
    }
  }
  return capabilities;
}

/**
 * How a federated `prompts/get` or `resources/read` asks its server, for this caller: in the
 * caller's generation, with the capabilities it declared, and (on a retried 2026-07-28 round)
 * its answers and the server's own state, unsealed.
 */
export function serverRound(
  ctx: ServerContext,
  era: "legacy" | "modern",
  /** What is asked (`prompts/get <name>`, `resources/read <uri>`): a state is for it alone. */
  target: string,
): {
  protocol: "2025-11-25" | "2026-07-28";
  capabilities?: RelayCapabilities;
  inputResponses?: Record<string, unknown>;
  requestState?: string;
} {
  if (era === "legacy") return { protocol: "2025-11-25" };
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const sealed = ctx.mcpReq.requestState<RoundState>();
  const inputResponses = ctx.mcpReq.inputResponses;
  return {
    protocol: "2026-07-28",
    capabilities: declared(envelope[CLIENT_CAPABILITIES_META_KEY]),
    ...(inputResponses ? { inputResponses } : {}),
    ...(sealed?.kind === "server" && sealed.target === target && sealed.state !== undefined
      ? { requestState: sealed.state }
      : {}),
  };
}

/**
 * A server's answer for the caller: an `input_required` one goes on with the server's state
 * sealed inside Toolbus's own, so only this caller's retry brings it back; any other as sent.
 */
export async function passRound<T>(
  relay: McpRelay | undefined,
  ctx: ServerContext,
  target: string,
  result: T,
): Promise<T> {
  const asked = result as { resultType?: unknown; inputRequests?: unknown; requestState?: unknown };
  if (asked?.resultType !== "input_required") return result;
  if (!relay) throw new Error("A server asked for input where nothing can pass it on.");
  const state = typeof asked.requestState === "string" ? asked.requestState : undefined;
  return inputRequired({
    inputRequests: asked.inputRequests as InputRequiredSpec["inputRequests"],
    requestState: await roundCodec(relay).mint(
      { kind: "server", target, ...(state ? { state } : {}) },
      ctx,
    ),
  }) as T;
}
