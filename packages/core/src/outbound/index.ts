export { createHttpClient, type HttpClientOptions, systemLookup } from "./client";
export { OutboundError } from "./errors";
export { failureFromOutbound, failureFromStatus, retryAfter } from "./failures";
export {
  checkUrl,
  forbiddenReason,
  isForbiddenAddress,
  parseOutboundUrl,
  type ResolvedAddress,
  type Resolver,
} from "./ssrf";
export type {
  HttpClient,
  OutboundConfig,
  OutboundErrorKind,
  OutboundRequest,
  OutboundResponse,
  Reachability,
  SecretSource,
} from "./types";
