import type { Deployment } from "../deployment";
import type { CallChannel } from "../ports";
import { memoryCallChannel } from "../relay/memory-channel";
import { shared, storeOf } from "./pieces";

/**
 * The stage's relay between running calls and their live MCP callers. Where every unit runs in
 * this one process (the local composition, which alone writes its table) it stays in memory;
 * where the API and the tools are separate functions (AWS) it goes through the table, whose
 * code loads with the first message.
 */
export const channelOf = (deployment: Deployment): CallChannel =>
  shared(deployment, "channel", () =>
    deployment.appendLog
      ? memoryCallChannel()
      : loadedOnUse(async () => {
          const { DynamoCallChannel } = await import("../store/dynamodb/call-channel");
          return new DynamoCallChannel(storeOf(deployment));
        }),
  );

/** A channel whose implementation is loaded when first used. */
function loadedOnUse(load: () => Promise<CallChannel>): CallChannel {
  let loaded: Promise<CallChannel> | undefined;
  const channel = () => {
    loaded ??= load();
    return loaded;
  };
  return {
    attach: async (key, caller) => (await channel()).attach(key, caller),
    answer: async (key, id, principalId, answer) =>
      (await channel()).answer(key, id, principalId, answer),
    caller: async (key) => (await channel()).caller(key),
    notify: async (key, message) => (await channel()).notify(key, message),
    ask: async (key, request, signal) => (await channel()).ask(key, request, signal),
  };
}
