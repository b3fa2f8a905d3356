import * as z from "zod";
import { approval, callRecord, callResult, callStatus, principal } from "../model/call";
import { callId, runId, toolId, toolsetName } from "../model/ids";
import { runBudget, runPolicy } from "../model/run";

/** The body of `POST /v1/runs/{runId}/calls`. */
export const callBody = z
  .object({
    tool: toolId,
    input: z.unknown().default({}),
    callId: callId.optional(),
    mode: z.string().min(1).max(64).optional(),
    /** Seconds to wait for the result; capped by the stage configuration. */
    wait: z.number().min(0).max(60).optional(),
    parentCallId: callId.optional(),
    /** The run's own limits, set once by its first call (or PUT /v1/runs/{runId}/policy). */
    policy: runPolicy.optional(),
  })
  .strict()
  .meta({ id: "CallRequest" });
export type CallRequest = z.infer<typeof callBody>;

/**
 * A call as callers see it: the input hash, tool version and bookkeeping attributes stay
 * inside, and the requester is only its principal id and role.
 */
export const callView = z
  .object({
    parentRunId: runId,
    callId,
    toolId,
    toolset: toolsetName,
    status: callStatus,
    mode: z.string().optional(),
    parentCallId: callId.optional(),
    requestedBy: principal,
    scheduledAt: z.string(),
    startedAt: z.string().optional(),
    /** The W3C trace the call was made under: GET /v1/traces/{traceId} lists its calls. */
    traceId: z.string().optional(),
    /** What the run had left once this call was counted (the limits its policy sets). */
    budget: runBudget.optional(),
    /** On a call that needs a person's approval: until when it waits, and the decision once made. */
    approval: approval.optional(),
    /** The latest progress its tool reported, once the run's log has it. */
    progress: callRecord.shape.progress,
    /** When someone asked the call to stop (it ends `cancelled` unless it finished first). */
    cancelRequestedAt: z.string().optional(),
    result: callResult.omit({ status: true }).optional(),
  })
  .refine(
    (call) => (call.status === "succeeded" || call.status === "failed") === Boolean(call.result),
    "A finished call has a result and an unfinished one has none.",
  )
  .refine(
    (call) => call.status !== "failed" || call.result?.failure !== undefined,
    "A failed call says why.",
  )
  .meta({ id: "Call" });

/** A call scheduled but not finished within its wait: where to poll it. */
export const callAcceptedView = z
  .object({
    callId,
    status: callStatus,
    statusUrl: z.string().meta({ example: "/v1/runs/run-42/calls/call-1" }),
  })
  .meta({ id: "CallAccepted" });

export const traceQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(100).meta({ example: 20 }),
});

/** The calls of one W3C trace, across runs, oldest first. */
export const traceCallsView = z
  .object({ traceId: z.string(), calls: z.array(callView) })
  .meta({ id: "TraceCalls" });
