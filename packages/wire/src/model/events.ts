import * as z from "zod";
import { callResult, fallbackAccess, principal, traceContext } from "./call";
import { callId, runId, toolId, toolsetName } from "./ids";
import { toolCallProgress } from "./progress-event";
import { runBudget } from "./run";

export { MAX_PROGRESS_MESSAGE } from "./call";
export { type ToolCallProgress, toolCallProgress } from "./progress-event";

/**
 * "direct": whoever announced the event also wrote it to its run's log (the API or the tool's
 * handler that finished the call), so the recorder's bus rule skips it. Absent when the
 * recorder logs it. Either way it is in the run's log once.
 */
const loggedBy = z.literal("direct").optional();

export const toolCallScheduled = z.object({
  eventKey: z.string().min(1),
  parentRunId: runId,
  callId,
  toolId,
  toolset: toolsetName,
  /** How the tool is implemented: bus rules route registered http and mcp tools by it. */
  implementation: z.enum(["builtin", "http", "mcp"]).optional(),
  input: z.unknown(),
  requestedBy: principal,
  mode: z.string().optional(),
  scheduledAt: z.string(),
  parentCallId: callId.optional(),
  /**
   * "direct": the API handed the call straight to its handler (a caller is waiting), so the
   * tool's bus rule skips it. Absent when the bus runs the call.
   */
  dispatch: z.literal("direct").optional(),
  log: loggedBy,
  trace: traceContext.optional(),
  /** Whether the tool's fallback may answer for the caller (see the call's `fallbackAccess`). */
  fallbackAccess: fallbackAccess.optional(),
});
export type ToolCallScheduled = z.infer<typeof toolCallScheduled>;

export const toolResultReceived = callResult.extend({
  eventKey: z.string().min(1),
  parentRunId: runId,
  callId,
  toolId,
  toolset: toolsetName,
  /** The result was too large for an event: `output` is a preview, the rest is on the call. */
  resultOmitted: z.boolean().default(false),
  trace: traceContext.optional(),
  /** What the run had left once the call was counted (only the limits its policy sets). */
  budget: runBudget.optional(),
  log: loggedBy,
});
export type ToolResultReceived = z.infer<typeof toolResultReceived>;

/** A call waits for a person's approval: who asked, for what, until when, where to decide. */
export const toolCallApprovalRequested = toolCallScheduled.extend({
  approval: z.object({ expiresAt: z.string(), decideUrl: z.string() }),
});
export type ToolCallApprovalRequested = z.infer<typeof toolCallApprovalRequested>;

/**
 * A registered MCP server's tool definitions changed: held for review, served at once
 * (the registration follows its server), or an administrator accepted or rejected held
 * changes. Keyed by toolset, not by run; the ids are the tools' ids here.
 */
export const toolDefinitionsChanged = z.object({
  eventKey: z.string().min(1),
  toolset: toolsetName,
  outcome: z.enum(["held", "followed", "accepted", "rejected"]),
  added: z.array(z.string()),
  changed: z.array(z.string()),
  removed: z.array(z.string()),
  occurredAt: z.string(),
  /** Where an administrator reads the held changes. */
  review: z.string(),
});
export type ToolDefinitionsChanged = z.infer<typeof toolDefinitionsChanged>;

export const EVENT_SCHEMAS = {
  ToolCallScheduled: toolCallScheduled,
  ToolResultReceived: toolResultReceived,
  ToolCallApprovalRequested: toolCallApprovalRequested,
  ToolCallProgress: toolCallProgress,
} as const;

/** One entry of a run's event log: the event as published, with its detail type. */
export const runEvent = z.object({
  eventKey: z.string(),
  detailType: z.enum([
    "ToolCallScheduled",
    "ToolResultReceived",
    "ToolCallApprovalRequested",
    "ToolCallProgress",
  ]),
  occurredAt: z.string(),
  detail: z.record(z.string(), z.unknown()),
});
export type RunEvent = z.infer<typeof runEvent>;

/**
 * When an event happened: a scheduling's `scheduledAt`, a result's `completedAt`, a progress
 * step's `reportedAt`, else the time the bus gives it. Every place that keeps or sends an event
 * dates it by this one rule.
 */
export function occurredAtOf(detail: Record<string, unknown>, time: string): string {
  const at = detail.scheduledAt ?? detail.completedAt ?? detail.reportedAt;
  return typeof at === "string" ? at : time;
}

/** Deterministic keys: a redelivered or republished event keeps its key, so consumers dedupe. */
export const scheduledEventKey = (runIdValue: string, callIdValue: string) =>
  `${runIdValue}/${callIdValue}/scheduled`;
export const resultEventKey = (runIdValue: string, callIdValue: string) =>
  `${runIdValue}/${callIdValue}/result`;
export const approvalEventKey = (runIdValue: string, callIdValue: string) =>
  `${runIdValue}/${callIdValue}/approval`;
export const progressEventKey = (runIdValue: string, callIdValue: string, step: number) =>
  `${runIdValue}/${callIdValue}/progress/${step}`;

/** The step of a progress event's key for this call, or undefined when the key is not one. */
export function progressStepOf(
  eventKey: string,
  runIdValue: string,
  callIdValue: string,
): number | undefined {
  const prefix = `${runIdValue}/${callIdValue}/progress/`;
  if (!eventKey.startsWith(prefix)) return undefined;
  const step = eventKey.slice(prefix.length);
  return /^[1-9][0-9]{0,14}$/.test(step) ? Number(step) : undefined;
}
