import type { Failure } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { ToolPolicy } from "@toolbus/wire/model/policy";
import type { CallReach, RunnableCall, RunOutcome } from "../app/calls/lifecycle";
import { type CapabilityDetector, missingCapability } from "../app/capabilities/detectors";
import type { StageConfig } from "../config";
import { actsAsUser, connectionSecret } from "../connections/credentials";
import type { ConnectionTokens } from "../connections/service";
import { fallbackLogger, type Logger } from "../observability/log";
import { withTraceparent } from "../observability/trace-context";
import type { HttpClient, SecretSource } from "../outbound/types";
import type { CachedOutput, RateLimiter, ResultCache } from "../ports";
import { type AnyToolDefinition, toolPolicyOf } from "../tool-definition";
import { canonicalJson, sha256Hex } from "../util/canonical-json";
import { executeTool } from "./execute";

/** What the policies use of a tool's runtime: upstream access, limits, cache, fallbacks. */
export interface ToolRunDeps {
  config: StageConfig;
  http: HttpClient;
  secret: SecretSource;
  capabilities: readonly CapabilityDetector[];
  cache?: ResultCache;
  rateLimiter?: RateLimiter;
  /** Tools that may stand in for others (a spec's `fallback`), by id. */
  fallbacks?: ReadonlyMap<string, AnyToolDefinition>;
  log?: Logger;
  /** Callers' connected accounts, for tools that act as their caller; absent where none is configured. */
  connections?: ConnectionTokens;
}

/** The same with the clock made explicit, and how the call reaches out (its progress, its caller). */
type PolicyDeps = ToolRunDeps & { now: () => Date } & Partial<CallReach>;

/** How a run under the policies ended: what the call lifecycle stores and announces. */
type PolicyOutcome = RunOutcome;

/** Failures a stale cached result may paper over: the upstream, not the request, is at fault. */
const STALE_WORTHY = new Set<Failure["kind"]>(["upstream_error", "timeout", "rate_limited"]);

/**
 * Failures a tool's fallback answers for: it cannot run here, or its upstream failed or did
 * not answer (offline, DuckDuckGo is not reached). Not a request the upstream refused
 * (`correct_call`: the fallback would not fix the input), nor a rate limit the caller can
 * wait out (`retryAfterMs`).
 */
function fallbackWorthy(failure: Failure): boolean {
  if (failure.kind === "unavailable") return true;
  return (
    (failure.kind === "upstream_error" || failure.kind === "timeout") &&
    failure.recovery !== "correct_call"
  );
}

/**
 * Everything around running a tool, in the order that protects upstream quotas: capability
 * gate (or fallback), the caller's rate limit, a fresh cache hit, the tool's own rate limit,
 * then the run itself, with a stale result served when the upstream fails, else the fallback.
 */
export async function runWithPolicies(
  tool: AnyToolDefinition,
  call: RunnableCall,
  deps: PolicyDeps,
  allowFallback = true,
): Promise<PolicyOutcome> {
  const spec = toolPolicyOf(tool);
  // A tool acting as its caller needs the caller's connection, not the stage's secret.
  const acting = actsAsUser(tool.catalogSpec ?? tool.spec, deps.config);
  const requires = acting?.capability
    ? spec.requires.filter((name) => name !== acting.capability)
    : spec.requires;
  const missing = missingCapability(requires, deps.capabilities, deps);
  if (missing) {
    const failure = Failures.unavailable(`${spec.id} is unavailable: ${missing.reason}`);
    return allowFallback ? withFallback(spec, call, deps, failure) : failed(failure);
  }
  let secret = deps.secret;
  if (acting) {
    const answer = deps.connections
      ? await deps.connections.accessToken(call.requestedBy, acting.provider, acting.scopes)
      : {
          ok: false as const,
          failure: Failures.unavailable(
            `${spec.id} acts as its caller, and this stage has no connected accounts configured.`,
          ),
        };
    if (!answer.ok) return failed(answer.failure);
    const name = acting.secret ?? connectionSecret(acting.provider);
    // Only the tool's own secret is the caller's token; nothing else of the stage changes.
    secret = (asked) => (asked === name ? answer.token : deps.secret(asked));
  }

  const now = deps.now().getTime();
  const perPrincipal = spec.rateLimit?.perPrincipal;
  // A result made with the caller's own account is theirs alone: keyed by who they are.
  const key =
    spec.cache && deps.cache
      ? cacheKey(spec, call.input, acting ? call.requestedBy.id : undefined)
      : undefined;
  // The caller's limit and the cache are independent reads: ask both at once. A call the
  // limit refuses has only cost a cache read.
  const [decision, entry] = await Promise.all([
    perPrincipal && deps.rateLimiter
      ? deps.rateLimiter.consume(`principal#${call.requestedBy.id}#${spec.id}`, perPrincipal, now)
      : undefined,
    key ? deps.cache?.get(key, now) : undefined,
  ]);
  if (decision && !decision.allowed) {
    return failed(rateLimited(spec.id, decision.retryAfterMs, "you"));
  }
  if (entry && entry.freshUntil > now) return fromCache(entry.value, false);
  const staleUsable = entry !== undefined; // present and not expired: within stale-if-error

  const perTool = spec.rateLimit?.perTool;
  if (perTool && deps.rateLimiter) {
    const decision = await deps.rateLimiter.consume(`tool#${spec.id}`, perTool, now);
    if (!decision.allowed) {
      if (staleUsable) return fromCache(entry.value, true);
      return failed(rateLimited(spec.id, decision.retryAfterMs, "this stage"));
    }
  }

  const execution = await executeTool(tool, call.input, {
    callId: call.callId,
    parentRunId: call.parentRunId,
    config: deps.config,
    now: deps.now,
    http: call.trace ? withTraceparent(deps.http, call.trace) : deps.http,
    secret,
    ...(deps.progress ? { progress: deps.progress } : {}),
    ...(deps.caller ? { caller: deps.caller } : {}),
    ...(deps.cancelled ? { cancelled: deps.cancelled } : {}),
  });
  if (execution.ok) {
    // A result that holds what the caller answered (a form, its roots) is the caller's alone.
    if (key && spec.cache && deps.cache && !deps.caller?.answered()) {
      const { ttlSeconds, staleIfErrorSeconds } = spec.cache;
      const freshUntil = now + ttlSeconds * 1000;
      const value: CachedOutput = {
        output: execution.output,
        data: execution.data,
        citations: execution.citations,
        ...(execution.content ? { content: execution.content } : {}),
      };
      // A cache that cannot take the result must not cost the caller a result it has.
      await deps.cache
        .put(key, value, freshUntil, freshUntil + staleIfErrorSeconds * 1000)
        .catch((error: unknown) => {
          (deps.log ?? fallbackLogger()).warn("A result could not be cached", {
            toolId: spec.id,
            error,
          });
        });
    }
    return { execution, cached: false, stale: false };
  }
  if (staleUsable && STALE_WORTHY.has(execution.failure.kind)) return fromCache(entry.value, true);
  if (allowFallback && fallbackWorthy(execution.failure)) {
    return withFallback(spec, call, deps, execution.failure);
  }
  return { execution, cached: false, stale: false };
}

/**
 * The tool's fallback answering in its place, or the tool's failure saying why its declared
 * fallback did not: it is never skipped in silence. Such a failure's recovery is `replan`:
 * nothing on this stage answers for the tool now.
 */
async function withFallback(
  spec: ToolPolicy,
  call: RunnableCall,
  deps: PolicyDeps,
  failure: Failure,
): Promise<PolicyOutcome> {
  if (!spec.fallback) return failed(failure);
  const via = await viaFallback(spec, spec.fallback, call, deps, failure.message);
  if ("outcome" in via) return via.outcome;
  return failed({
    ...failure,
    message: `${failure.message} ${spec.id}'s fallback ${via.why}`,
    recovery: "replan",
  });
}

async function viaFallback(
  spec: ToolPolicy,
  id: string,
  call: RunnableCall,
  deps: PolicyDeps,
  reason: string,
): Promise<{ outcome: PolicyOutcome } | { why: string }> {
  // Whether it may answer for this caller was decided when the call was accepted (selection,
  // recorded on the call): obeyed here, never judged again. A call without it gets none.
  const access = call.fallbackAccess;
  if (access?.tool !== id || !access.allowed) return { why: notForCaller(id, access?.reasons) };
  const fallback = deps.fallbacks?.get(id);
  if (!fallback) return { why: `${id} is not deployed with it.` };
  // A capability named after the fallback says whether it has anything to serve here
  // (static_links: links configured); selection judges it by the same status.
  const serving = deps.capabilities.find((detector) => detector.name === id)?.detect(deps);
  if (serving && !serving.available) return { why: cannotServe(id, serving.reason) };
  // The fallback answers in its own terms: the original input may not fit its schema.
  const input = fallback.input.safeParse(call.input).success ? call.input : {};
  const outcome = await runWithPolicies(fallback, { ...call, input }, deps, false);
  if (!outcome.execution.ok) {
    return { why: `${id} could not answer either: ${outcome.execution.failure.message}` };
  }
  return { outcome: { ...outcome, fallback: { from: spec.id, to: id, reason } } };
}

/** "static_links is not available to this caller (disabled, role)." */
function notForCaller(id: string, reasons: readonly string[] | undefined): string {
  const why = reasons?.length ? reasons.join(", ") : "not offered when the call was accepted";
  return `${id} is not available to this caller (${why}).`;
}

/** "static_links has no links configured on this stage.", or the reason after the name. */
function cannotServe(id: string, reason: string | undefined): string {
  if (reason?.startsWith(`${id} `)) return reason;
  return `${id} has nothing to serve on this stage${reason ? `: ${reason}` : "."}`;
}

/** Tool id + version + hash of the canonical JSON of the key fields (all input by default). */
export function cacheKey(spec: ToolPolicy, input: unknown, principalId?: string): string {
  const fields = spec.cache?.keyFields;
  const keyed =
    fields && input !== null && typeof input === "object"
      ? Object.fromEntries(fields.map((f) => [f, (input as Record<string, unknown>)[f] ?? null]))
      : input;
  const hash = sha256Hex(canonicalJson(principalId === undefined ? keyed : [principalId, keyed]));
  return `${spec.id}#${spec.version}#${hash}`;
}

function fromCache(value: CachedOutput, stale: boolean): PolicyOutcome {
  return { execution: { ok: true, ...value }, cached: true, stale };
}

function failed(failure: Failure): PolicyOutcome {
  return { execution: { ok: false, failure }, cached: false, stale: false };
}

function rateLimited(toolId: string, retryAfterMs: number, who: string): Failure {
  return Failures.rateLimited(
    `${toolId} has reached the rate limit for ${who}; try again in ${Math.ceil(retryAfterMs / 1000)} s.`,
    retryAfterMs,
  );
}
