// The slice of core the subscriptions fan-out's functions need, apart from the other
// handlers' (runtime/index.ts), so only they carry the SQS client and the matcher.
export { subscriptionHandlers } from "./subscriptions";
