import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { SDK_CLIENT_OPTIONS } from "@toolbus/core/sdk-options";
import { inProcessRequestHandler } from "./request-handler";
import type { LocalEventBus } from "./service";

/** Local endpoints accept any credentials; fixed ones keep the SDK from searching for real ones. */
const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" };

/** An unmodified EventBridge SDK client aimed at the local bus, over HTTP or in-process. */
export function localEventBridgeClient(
  to: { endpoint: string } | { bus: LocalEventBus },
): EventBridgeClient {
  if ("endpoint" in to) {
    return new EventBridgeClient({
      endpoint: to.endpoint,
      region: "us-east-1",
      ...SDK_CLIENT_OPTIONS,
      credentials: LOCAL_CREDENTIALS,
    });
  }
  return new EventBridgeClient({
    endpoint: "http://in-process.local",
    ...SDK_CLIENT_OPTIONS,
    region: to.bus.region,
    credentials: LOCAL_CREDENTIALS,
    requestHandler: inProcessRequestHandler(to.bus),
  });
}
