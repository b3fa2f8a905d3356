import type { CapabilityDetector } from "../app/capabilities/detectors";
import type { Deployment } from "../deployment";
import { OutboundError } from "../outbound/errors";
import type { HttpClient } from "../outbound/types";
import type { ToolRuntimeDeps } from "../runtime/tool-handler";
import { memoResultCache } from "../store/cached";
import { DynamoEventLog } from "../store/dynamodb/event-log";
import { DynamoRateLimiter } from "../store/dynamodb/rate-limiter";
import { DynamoResultCache } from "../store/dynamodb/result-cache";
import type { AnyToolDefinition, ConnectionsMaker } from "../tool-definition";
import { busOf } from "./bus";
import { callRunsOf } from "./calls";
import { noticesOf } from "./notices";
import { runningOf, secretOf, storeOf } from "./pieces";

/** What a tool runs with beyond the stage's pieces: its detectors and the tools it may fall back to. */
export interface RunScope {
  capabilities?: readonly CapabilityDetector[];
  fallbacks?: readonly AnyToolDefinition[];
  /** Callers' connected accounts, for tools that act as their caller. */
  connections?: ConnectionsMaker | undefined;
}

/**
 * One tool's handler's dependencies, and nothing more, so a Lambda bundle stays small:
 * `http` is the outbound client, or `offlineHttp` for a tool that never reaches the network
 * (its function then carries no SSRF guard or address tables); `calls` is what running a call
 * needs of the call store (the API's whole store where one process runs both); `channel` only
 * tells a call's caller its progress, never asks it anything (`noticesOf`).
 */
export function toolDeps(
  deployment: Deployment,
  http: HttpClient,
  scope: RunScope = {},
  calls: ToolRuntimeDeps["calls"] = callRunsOf(deployment),
): ToolRuntimeDeps {
  const store = storeOf(deployment);
  const connections = scope.connections?.(deployment, http);
  return {
    calls,
    running: runningOf(deployment),
    bus: busOf(deployment),
    // A finished call's events are logged by its handler, not by the recorder a delivery later.
    runLog: new DynamoEventLog(store),
    channel: noticesOf(deployment),
    config: deployment.config,
    http,
    ...(deployment.log ? { log: deployment.log } : {}),
    ...(deployment.metrics ? { metrics: deployment.metrics } : {}),
    secret: secretOf(deployment),
    capabilities: scope.capabilities ?? [],
    cache: memoResultCache(new DynamoResultCache(store)),
    rateLimiter: new DynamoRateLimiter(store),
    fallbacks: new Map((scope.fallbacks ?? []).map((tool) => [tool.spec.id, tool])),
    ...(connections ? { connections } : {}),
  };
}

/** The outbound client of a tool that never reaches the network: a request fails as blocked. */
export const offlineHttp: HttpClient = {
  request: async () => noNetwork(),
  open: async () => noNetwork(),
};

function noNetwork(): never {
  throw new OutboundError("blocked", "this tool's function has no network access");
}
