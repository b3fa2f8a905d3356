import { EventEmitter } from "node:events";
import { settleOn } from "../../util/settle-on";

/** The topic of one run's log in one table: its followers' and its promised appends' key. */
export const runTopic = (tableName: string, parentRunId: string) => `${tableName}\n${parentRunId}`;

/** Appends made in this process, by topic (a table and a run, or a table's stream). */
const appends = new EventEmitter();
appends.setMaxListeners(0);
/** Topics whose followers are to wake at the end of this turn. */
const toWake = new Set<string>();

/**
 * Wakes a topic's followers once per burst of appends, not once per event: each wake costs
 * every follower a read.
 */
export function wakeFollowers(topic: string): void {
  if (toWake.has(topic)) return;
  toWake.add(topic);
  setImmediate(() => {
    toWake.delete(topic);
    appends.emit(topic);
  });
}

/** Resolves at the topic's next wake (or when `signal` aborts). */
export function nextWake(topic: string, signal: AbortSignal): Promise<void> {
  return settleOn(appends, topic, signal);
}
