import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SDK_CLIENT_OPTIONS } from "@toolbus/core/sdk-options";
import { inProcessRequestHandler } from "./request-handler";
import type { LocalEventBus } from "./service";
import type { LocalCredentials } from "./sigv4";

/** In-process requests are not signed-checked; fixed ones keep the SDK from searching for real ones. */
const IN_PROCESS_CREDENTIALS = { accessKeyId: "in-process", secretAccessKey: "in-process" };

/**
 * An unmodified EventBridge SDK client aimed at the local bus: over HTTP, signing with the
 * credentials the bus's server handed out (an `EventBridgeServer` is such a target), or
 * in-process.
 */
export function localEventBridgeClient(
  to: { endpoint: string; credentials: LocalCredentials } | { bus: LocalEventBus },
): EventBridgeClient {
  if ("endpoint" in to) {
    return new EventBridgeClient({
      endpoint: to.endpoint,
      region: "us-east-1",
      ...SDK_CLIENT_OPTIONS,
      credentials: to.credentials,
    });
  }
  return new EventBridgeClient({
    endpoint: "http://in-process.local",
    ...SDK_CLIENT_OPTIONS,
    region: to.bus.region,
    credentials: IN_PROCESS_CREDENTIALS,
    requestHandler: inProcessRequestHandler(to.bus),
  });
}
