import type { CapabilityDetector } from "../app/capabilities/detectors";
import { type Deployment, environmentSecrets } from "../deployment";
import { EventPublisher } from "../events/publisher";
import { createHttpClient } from "../outbound/client";
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

/**
 * What one tool's handler needs, and nothing more: a Lambda bundle stays small. `fallbacks`
 * lists only the tools this one may fall back to.
 */
export function toolRuntimeDeps(
  deployment: Deployment,
  extras: {
    capabilities?: readonly CapabilityDetector[];
    fallbacks?: readonly AnyToolDefinition[];
  } = {},
): ToolRuntimeDeps {
  const options = storeOptions(deployment);
  return {
    calls: new DynamoCallStore(options),
    publisher: new EventPublisher({ client: deployment.eventBridge, busName: deployment.busName }),
    config: deployment.config,
    http: createHttpClient(deployment.config.outbound),
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
    publisher: new EventPublisher({ client: deployment.eventBridge, busName: deployment.busName }),
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
  };
}
