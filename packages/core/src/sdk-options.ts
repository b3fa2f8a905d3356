/**
 * How long one SDK request may take before we give up on it. A store or bus that stops
 * answering (a hung process, a dropped connection) must turn into a 503 within a caller's
 * default wait (5 s), never a request that hangs for as long as the socket lives. DynamoDB and
 * EventBridge answer in milliseconds; a request with no byte back for 2 s is not coming.
 * Two attempts at most: 2 × 2 s plus the SDK's backoff stays under 5 s.
 */
const REQUEST_HANDLER = {
  connectionTimeout: 1_000,
  requestTimeout: 2_000,
  throwOnRequestTimeout: true,
} as const;

/**
 * Options every AWS SDK client of ours takes. `cacheMiddleware` resolves a command's middleware
 * stack once per command class instead of on every send: a call makes several requests, and
 * resolving the stack was a measurable share of each one's CPU time. DynamoDB's document client
 * refuses it, so DynamoDB clients go without.
 */
export const SDK_CLIENT_OPTIONS = {
  cacheMiddleware: true,
  maxAttempts: 2,
  requestHandler: REQUEST_HANDLER,
} as const;

/**
 * How long after a request's failure it may still land: the SDK gave up on its attempts, but
 * each may still sit in the server's queue. What a writer reuses of a failed request's places
 * waits this long (log-sole-writer.ts).
 */
export const REQUEST_MAY_LAND_MS =
  SDK_CLIENT_OPTIONS.maxAttempts * REQUEST_HANDLER.requestTimeout + 1_000;

/** The same bounds for DynamoDB clients, without `cacheMiddleware` (see above). */
export const DYNAMODB_CLIENT_OPTIONS = {
  maxAttempts: 2,
  requestHandler: REQUEST_HANDLER,
} as const;
