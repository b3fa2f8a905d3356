import type { EventPublisher } from "../events/publisher";
import type { CallResult } from "../model/call";
import { Failures } from "../model/failure";
import type { CallStore } from "../ports";
import { completionTime, publishResult } from "./tool-handler";

export interface SweeperDeps {
  calls: CallStore;
  publisher: EventPublisher;
  now?: () => Date;
}

/**
 * Fails calls stuck in RUNNING past their deadline: their handler died (a crash, a Lambda
 * timeout) after claiming them, and no redelivery can run them again. Each becomes a failed
 * result of kind `timeout`, announced like any other, so no caller waits forever. The
 * completion is conditional on the call still running: a handler that finishes late wins.
 */
export function createSweeper(deps: () => SweeperDeps | Promise<SweeperDeps>) {
  return async (): Promise<{ swept: number }> => {
    const { calls, publisher, now = () => new Date() } = await deps();
    const stuck = await calls.listStuck(now().toISOString(), 100);
    let swept = 0;
    for (const call of stuck) {
      const result: CallResult = {
        status: "failed",
        output: `${call.toolId} did not finish before its deadline.`,
        data: null,
        citations: [],
        failure: Failures.timeout(
          `${call.toolId} did not finish before its deadline; its handler stopped.`,
        ),
        cached: false,
        stale: false,
        durationMs: call.startedAt ? now().getTime() - Date.parse(call.startedAt) : 0,
        resultBytes: 0,
        truncated: false,
        completedAt: completionTime(call.scheduledAt, now()),
      };
      const completed = await calls.complete(call.parentRunId, call.callId, result);
      if (!completed) continue;
      await publishResult(completed, result, publisher, calls, now);
      swept++;
    }
    return { swept };
  };
}
