import type { DynamoCallStore } from "../../packages/core/src/store/dynamodb";
import type { CallRecord, CallResult } from "../../packages/wire/src/model/call";
import type { RunEvent } from "../../packages/wire/src/model/events";

/** A call as the API records it before announcing it: what a handler's first event claims. */
export const pendingCall = (
  toolId: string,
  input: unknown,
  overrides: Partial<CallRecord> = {},
): CallRecord => ({
  parentRunId: "run-1",
  callId: `call-${toolId}`,
  toolId,
  toolset: toolId,
  toolVersion: "1",
  input,
  inputHash: "h",
  requestedBy: { id: "tester", role: "member" },
  scheduledAt: new Date().toISOString(),
  status: "pending",
  ...overrides,
});

/** A succeeded result, as a handler stores it. */
export const succeededResult = (overrides: Partial<CallResult> = {}): CallResult => ({
  status: "succeeded",
  output: "done",
  data: null,
  citations: [],
  cached: false,
  stale: false,
  durationMs: 1,
  resultBytes: 4,
  truncated: false,
  completedAt: "2026-01-01T00:00:02.000Z",
  ...overrides,
});

/**
 * A call recorded, claimed and completed through the store, as the recorder finds it after
 * its handler stored the result: on the outbox index, nothing logged yet.
 */
export async function finishedCall(
  calls: DynamoCallStore,
  record: Pick<CallRecord, "parentRunId" | "callId"> & Partial<CallRecord>,
  result: CallResult = succeededResult(),
): Promise<CallRecord> {
  const { parentRunId, callId } = record;
  await calls.create({
    toolId: "web_search",
    toolset: "research",
    toolVersion: "1",
    input: { query: callId },
    inputHash: "h",
    requestedBy: { id: "tester", role: "member" },
    scheduledAt: "2026-01-01T00:00:01.000Z",
    ...record,
    status: "pending",
  });
  await calls.claim(parentRunId, callId, "2099-01-01T00:00:00.000Z");
  const done = await calls.complete(parentRunId, callId, result);
  if (!done) throw new Error(`${callId} was not completed`);
  return done;
}

/** A call's ToolCallScheduled as a run's log keeps it. */
export const scheduledEvent = (call: CallRecord): RunEvent => ({
  eventKey: `${call.parentRunId}/${call.callId}/scheduled`,
  detailType: "ToolCallScheduled",
  occurredAt: call.scheduledAt,
  detail: { parentRunId: call.parentRunId, callId: call.callId, input: call.input },
});

/** A call's ToolResultReceived as a run's log keeps it. */
export const resultEvent = (
  call: CallRecord,
  { output = "done", occurredAt = "2026-01-01T00:00:02.000Z" } = {},
): RunEvent => ({
  eventKey: `${call.parentRunId}/${call.callId}/result`,
  detailType: "ToolResultReceived",
  occurredAt,
  detail: { parentRunId: call.parentRunId, callId: call.callId, output },
});
