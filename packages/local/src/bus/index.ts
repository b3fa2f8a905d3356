export { localEventBridgeClient } from "./client";
export type { DeadLetter } from "./dead-letters";
export type { DeliveryOptions } from "./delivery";
export type { EventEnvelope } from "./envelope";
export { MAX_ENTRY_BYTES } from "./envelope";
export { EventBridgeApiError } from "./errors";
export { type EventBridgeServer, startEventBridgeServer } from "./http-server";
export { inProcessRequestHandler } from "./request-handler";
export {
  type InvocationContext,
  LocalEventBus,
  type LocalEventBusOptions,
  type LocalFunction,
} from "./service";
export { generateLocalCredentials, type LocalCredentials } from "./sigv4";
