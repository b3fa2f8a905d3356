import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import type { Deployment } from "./deployment";
import { SDK_CLIENT_OPTIONS } from "./sdk-options";

let made: EventBridgeClient | undefined;

/** The deployment's bus client: the one it was given, or one made (once) from the environment. */
export function busClient(deployment: Pick<Deployment, "eventBridge">): EventBridgeClient {
  if (deployment.eventBridge) return deployment.eventBridge;
  made ??= new EventBridgeClient(SDK_CLIENT_OPTIONS);
  return made;
}
