import type { CapabilityDetector } from "../app/capabilities/detectors";
import { busClient } from "../bus-client";
import { type Deployment, environmentSecrets } from "../deployment";
import { EventPublisher } from "../events/publisher";
import { createHttpClient } from "../outbound/client";
import { OutboundError } from "../outbound/errors";
import type { HttpClient } from "../outbound/types";
import { memoResultCache } from "../store/cached";
import {
  DynamoCallStore,
  DynamoEventLog,
  DynamoRateLimiter,
  DynamoResultCache,
  storeOptions,
} from "../store/dynamodb";
import type { AnyToolDefinition } from "../tool-definition";
import type { RecorderDeps } from "./recorder";
import type { ToolRuntimeDeps } from "./tool-handler";

interface ToolRuntimeExtras {
  capabilities?: readonly CapabilityDetector[];
  fallbacks?: readonly AnyToolDefinition[];
}

/**
 * What one tool's handler needs, and nothing more: a Lambda bundle stays small. `fallbacks`
 * lists only the tools this one may fall back to.
 */
export function toolRuntimeDeps(
  deployment: Deployment,
  extras: ToolRuntimeExtras = {},
): ToolRuntimeDeps {
  return depsWith(deployment, extras, createHttpClient(deployment.config.outbound));
}

/**
 * The same for a tool that never reaches the network (it computes from its input and
 * settings): its function carries no outbound client (the SSRF guard and its address tables),
 * and a request it makes anyway fails as blocked.
 */
export function offlineToolRuntimeDeps(
  deployment: Deployment,
  extras: ToolRuntimeExtras = {},
): ToolRuntimeDeps {
  return depsWith(deployment, extras, offline);
}

const offline: HttpClient = {
  request: async () => {
    throw new OutboundError("blocked", "this tool's function has no network access");
  },
};

function depsWith(
  deployment: Deployment,
  extras: ToolRuntimeExtras,
  http: HttpClient,
): ToolRuntimeDeps {
  const options = storeOptions(deployment);
  return {
    calls: new DynamoCallStore(options),
    publisher: new EventPublisher({ client: busClient(deployment), busName: deployment.busName }),
    config: deployment.config,
    http,
    log: deployment.log,
    metrics: deployment.metrics,
    secret: deployment.secret ?? environmentSecrets(),
    capabilities: extras.capabilities ?? [],
    cache: memoResultCache(new DynamoResultCache(options)),
    rateLimiter: new DynamoRateLimiter(options),
    fallbacks: new Map((extras.fallbacks ?? []).map((tool) => [tool.spec.id, tool])),
  };
}

export function sweeperDeps(deployment: Deployment) {
  return {
    calls: new DynamoCallStore(storeOptions(deployment)),
    publisher: new EventPublisher({ client: busClient(deployment), busName: deployment.busName }),
  };
}

export function recorderDeps(deployment: Deployment): RecorderDeps {
  const options = storeOptions(deployment);
  const calls = new DynamoCallStore(options);
  return {
    events: new DynamoEventLog(options),
    calls,
    // Where this process also ran the call (npm start), it knows the call without a read.
    recentCall: (runId, callId) => calls.recent(runId, callId),
    ...(deployment.log ? { log: deployment.log } : {}),
  };
}
