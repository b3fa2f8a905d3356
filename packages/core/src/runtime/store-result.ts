import { ToolbusError } from "../errors";
import type { CallRecord, CallResult } from "../model/call";
import { Failures } from "../model/failure";
import { fallbackLogger, type Logger } from "../observability/log";
import type { CallStore } from "../ports";

/** The result's size as UTF-8 JSON, or undefined when it cannot be written as JSON at all. */
export function resultSize(body: unknown): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(body) ?? "");
  } catch {
    // Nested deeper than JSON.stringify's stack allows (an upstream's hostile output).
    return undefined;
  }
}

/**
 * The result to store when a tool's output cannot be: the call ends failed as
 * `invalid_output` rather than staying `running` until the sweeper calls it stuck.
 */
export function unstorableResult(result: CallResult, why: string): CallResult {
  const failure = Failures.invalidOutput(`The tool's output could not be stored: ${why}.`);
  return {
    ...result,
    status: "failed",
    output: failure.message,
    data: null,
    citations: [],
    failure,
    truncated: true,
  };
}

/**
 * Stores a finished call's result. The store already shrinks results that are too large; what
 * it still refuses (an item DynamoDB will not take, a value it cannot encode) is the output's
 * fault, so the call is stored failed with `invalid_output` instead. An outage is not: it is
 * thrown, and the delivery is retried.
 */
export async function storeResult(
  calls: CallStore,
  call: Pick<CallRecord, "parentRunId" | "callId">,
  result: CallResult,
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
    return calls.complete(call.parentRunId, call.callId, unstorableResult(result, why));
  }
}
