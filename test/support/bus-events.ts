import { scheduledDetail } from "../../packages/core/src/app/calls/lifecycle";
import type { DynamoCallStore } from "../../packages/core/src/store/dynamodb";
import type { CallRecord, CallResult } from "../../packages/wire/src/model/call";
import { finishedCall, succeededResult } from "./calls";

/** The result of a finished `readability_analyzer` call, as the bus's consumers' tests use it. */
export const readabilityResult = succeededResult({
  output: "42 words",
  data: { words: 42 },
  resultBytes: 20,
});

/** A `readability_analyzer` call recorded as finished with readabilityResult. */
export const recordedReadabilityCall = (calls: DynamoCallStore, runId: string, callId: string) =>
  finishedCall(
    calls,
    {
      parentRunId: runId,
      callId,
      toolId: "readability_analyzer",
      toolset: "text_analysis",
      input: { text: "Some text." },
    },
    readabilityResult,
  );

/** A bus event as Toolbus publishes it (EventBridge's envelope). */
const envelope = (detailType: string, detail: Record<string, unknown>) => ({
  source: "toolbus",
  "detail-type": detailType,
  time: "2026-01-01T00:00:02Z",
  detail,
});

/** The ToolCallScheduled Toolbus publishes for a call. */
export const scheduledBusEvent = (call: CallRecord) =>
  envelope("ToolCallScheduled", scheduledDetail(call));

/** The ToolResultReceived Toolbus publishes for a call that finished with `result`. */
export const resultBusEvent = (call: CallRecord, result: CallResult = readabilityResult) =>
  envelope("ToolResultReceived", {
    ...result,
    eventKey: `${call.parentRunId}/${call.callId}/result`,
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    resultOmitted: false,
  });
