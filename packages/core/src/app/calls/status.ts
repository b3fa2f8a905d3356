import type { CallRecord } from "@toolbus/wire/model/call";

const TERMINAL = new Set<CallRecord["status"]>(["succeeded", "failed"]);

/** Succeeded or failed: nothing about the call changes any more. */
export const isFinished = (call: Pick<CallRecord, "status">) => TERMINAL.has(call.status);

/** Where a call can be followed over REST. */
export const statusUrl = (call: Pick<CallRecord, "parentRunId" | "callId">) =>
  `/v1/runs/${call.parentRunId}/calls/${call.callId}`;

/** Where a person approves or denies a call (POST, `/approve` or `/deny`). */
export const decideUrl = (call: Pick<CallRecord, "parentRunId" | "callId">) =>
  `${statusUrl(call)}/approve`;
