import type { Deployment } from "../deployment";
import type { CallChannel } from "../ports";
import { loadedOnUse } from "./loaded-on-use";
import { relayOf } from "./notices";
import { storeOf } from "./pieces";

/**
 * The stage's relay between running calls and their live MCP callers, for the API: in memory
 * where every unit runs in this one process (relayOf), else through the table, whose code
 * loads with the first message (the API is built in chunks). A function built as one file
 * takes its relay without `import()` (notices.ts says why): noticesOf for a built-in tool,
 * the table's whole channel for a registered one (registered.ts).
 */
export const channelOf = (deployment: Deployment): CallChannel =>
  relayOf(deployment, "channel", () =>
    loadedOnUse(async () => {
      const { DynamoCallChannel } = await import("../store/dynamodb/call-channel");
      return new DynamoCallChannel(storeOf(deployment));
    }, ["attach", "answer", "caller", "notify", "ask"]),
  );
