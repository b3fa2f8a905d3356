import { ToolbusError } from "../../../errors";
import type { CallRecord, CallResult } from "../../../model/call";
import { fallbackLogger, type Logger } from "../../../observability/log";
import type { CallStore } from "../../../ports";
import { unstorableResult } from "./results";

/**
 * Stores a finished call's result (RUNNING -> SUCCEEDED/FAILED). The store already shrinks
 * results that are too large; what it still refuses (an item DynamoDB will not take, a value
 * it cannot encode) is the output's fault, so the call is stored failed with `invalid_output`
 * instead. An outage is not: it is thrown, and the delivery is retried. Undefined when the
 * call was no longer running (the sweeper failed it as stuck).
 */
export async function storeResult(
  calls: Pick<CallStore, "complete">,
  call: Pick<CallRecord, "parentRunId" | "callId" | "scheduledAt">,
  result: CallResult,
  now: Date,
  log: Logger = fallbackLogger(),
): Promise<CallRecord | undefined> {
  try {
    return await calls.complete(call.parentRunId, call.callId, result);
  } catch (error) {
    if (error instanceof ToolbusError && error.status >= 500) throw error;
    if (result.failure?.kind === "invalid_output" && result.data === null) throw error;
    log.warn("A tool's result could not be stored; the call fails as invalid_output", {
      callId: call.callId,
      error,
    });
    const why = error instanceof RangeError ? "it is nested too deeply" : "the store refused it";
    const facts = { cached: result.cached, stale: result.stale, durationMs: result.durationMs };
    return calls.complete(call.parentRunId, call.callId, unstorableResult(call, why, now, facts));
  }
}
