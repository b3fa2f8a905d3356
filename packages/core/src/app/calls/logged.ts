import type { CallRecord } from "@toolbus/wire/model/call";
import { callFields } from "../../observability/calls";
import { fallbackLogger, type Logger } from "../../observability/log";
import type { EventLog } from "../../ports";

/**
 * Longest a finished call's answer waits for the recorder in this process: it logs a call
 * within tens of milliseconds (a few hundred on an on-disk DynamoDB Local), so only a recorder
 * that is down, its deliveries being retried, ever takes this long.
 */
export const LOGGED_WITHIN_MS = 2_000;

interface LoggedWaitDeps {
  /** Resolves when this process appends to the run's log (or the signal aborts). */
  events: Required<Pick<EventLog, "appended">>;
  /**
   * The call as this process last wrote it. Logging its result marks it (`resultPublishedAt`),
   * and where the recorder runs here, the mark is remembered before the append wakes anyone.
   */
  recent(parentRunId: string, callId: string): CallRecord | undefined;
  log?: Logger;
  withinMs?: number;
}

/**
 * Read your own calls, where the recorder runs in the process that answers the call (the
 * local composition: `npm start` and tests, where one process writes the whole table): a
 * finished call is answered once its run's log holds both its events, so a `GET` of the run's
 * events right after the answer shows `ToolCallScheduled` and `ToolResultReceived`. Logging
 * the result is what marks the call, and the recorder never logs a result before its
 * scheduling (it brings it along), so the mark means both are there. Bounded by `withinMs`: a
 * recorder that is down costs the answer that long and a warning, never the answer. On AWS
 * the recorder is another function and nothing waits (CallService's `logged` is not set).
 */
export function loggedWait(deps: LoggedWaitDeps): (call: CallRecord) => Promise<void> {
  const withinMs = deps.withinMs ?? LOGGED_WITHIN_MS;
  const logged = (call: CallRecord) =>
    call.resultPublishedAt !== undefined ||
    deps.recent(call.parentRunId, call.callId)?.resultPublishedAt !== undefined;
  return async (call) => {
    if (logged(call)) return;
    const started = Date.now();
    const gaveUp = new AbortController();
    const timer = setTimeout(() => gaveUp.abort(), withinMs);
    try {
      // Checked, then waited on, in one turn: an append in between cannot be missed.
      while (!logged(call)) {
        if (gaveUp.signal.aborted) {
          (deps.log ?? fallbackLogger()).warn(
            "call answered before its events were in its run's log: is the recorder down?",
            { ...callFields(call), waitedMs: Date.now() - started },
          );
          return;
        }
        await deps.events.appended(call.parentRunId, gaveUp.signal);
      }
    } finally {
      clearTimeout(timer);
    }
  };
}
