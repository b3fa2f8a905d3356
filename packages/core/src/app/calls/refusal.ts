import type { CallRecord, CallResult, Failure } from "../../model/call";
import { completionTime } from "../../runtime/tool-handler";

/**
 * The result of a call that never ran because the platform said no (its run's policy, a
 * person, an approval that expired): failed, with the failure and its message, at once.
 */
export function refusalResult(call: CallRecord, failure: Failure, now: Date): CallResult {
  return {
    status: "failed",
    output: failure.message,
    data: null,
    citations: [],
    failure,
    cached: false,
    stale: false,
    durationMs: 0,
    resultBytes: Buffer.byteLength(failure.message),
    truncated: false,
    completedAt: completionTime(call.scheduledAt, now),
  };
}
