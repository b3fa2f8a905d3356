/**
 * Options every AWS SDK client of ours takes. `cacheMiddleware` resolves a command's middleware
 * stack once per command class instead of on every send: a call makes several requests, and
 * resolving the stack was a measurable share of each one's CPU time. DynamoDB's document client
 * refuses it, so DynamoDB clients go without.
 */
export const SDK_CLIENT_OPTIONS = { cacheMiddleware: true } as const;
