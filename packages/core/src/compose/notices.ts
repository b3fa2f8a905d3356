import type { Deployment } from "../deployment";
import type { CallChannel, CallNotices } from "../ports";
import { memoryCallChannel } from "../relay/memory-channel";
import { DynamoCallNotices } from "../store/dynamodb/call-notices";
import { shared, storeOf } from "./pieces";

/*
 * Apart from channel.ts on purpose, and without `import()`: a single-file bundle (every
 * function but the API's) that so much as contains an `import()` of a module reaching the
 * DynamoDB client wraps that client for lazy loading, which keeps all of it (every command's
 * schema, its waiters: ~57 KB) in the bundle even where that import never runs. Only the
 * API, built in chunks, loads the table's channel lazily (channel.ts).
 */

/**
 * The stage's relay, as `onTable` makes it (once per deployment, under `name`) where the API
 * and the tools are separate functions (AWS); where every unit runs in this one process (the
 * local composition, which alone writes its table), the one in-memory channel they all share.
 */
export function relayOf<T extends CallNotices>(
  deployment: Deployment,
  name: string,
  onTable: () => T,
): T | CallChannel {
  return deployment.appendLog ? memoryChannelOf(deployment) : shared(deployment, name, onTable);
}

/**
 * The relay as a built-in tool's function needs it: its calls' callers and messages for them,
 * never a request (their tools ask nothing; one asked is refused at once). On AWS only the
 * table's notice side (single-item reads and puts); a function whose tools ask (a registered
 * tool's) takes the whole channel.
 */
export const noticesOf = (deployment: Deployment): CallNotices =>
  relayOf(deployment, "notices", () => new DynamoCallNotices(storeOf(deployment)));

/** The one in-memory channel of a process, shared by the API and the tools it runs. */
const memoryChannelOf = (deployment: Deployment): CallChannel =>
  shared(deployment, "memory-channel", memoryCallChannel);
