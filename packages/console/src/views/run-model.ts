/**
 * What the runs pages know about a run, derived from its events alone (the API's run events,
 * packages/wire/src/model/events.ts): each call with its events in order and the state they
 * add up to. No DOM here.
 */
import type { runEventView } from "@toolbus/wire/schemas";
import type { z } from "zod";

/** One entry of a run's event log, as `GET /v1/runs/{runId}/events` and `/v1/events` send it. */
export type RunEvent = z.infer<typeof runEventView>;

export interface Who {
  id: string;
  role: string;
}

export interface Failure {
  kind: string;
  message: string;
  retryable?: boolean;
  retryAfterMs?: number;
  recovery?: string;
  connection?: { provider?: string; reason?: string; connectUrl?: string };
}

export interface Budget {
  calls?: number;
  cost?: number;
  seconds?: number;
}

export interface Result {
  status: "succeeded" | "failed";
  output?: string;
  failure?: Failure;
  cached?: boolean;
  stale?: boolean;
  truncated?: boolean;
  resultOmitted?: boolean;
  durationMs?: number;
  resultBytes?: number;
  completedAt?: string;
  fallback?: { from: string; to: string; reason: string };
  budget?: Budget;
}

export interface Progress {
  progress: number;
  total?: number;
  message?: string;
  reportedAt: string;
}

/** What a call's state is, as its events tell it. */
export type CallPhase = "awaiting_approval" | "running" | "succeeded" | "failed" | "cancelled";

/** A call as its events tell it. */
export interface CallState {
  callId: string;
  toolId: string;
  toolset?: string;
  input?: unknown;
  hasInput: boolean;
  requestedBy?: Who;
  mode?: string;
  parentCallId?: string;
  /** The first of its events. */
  firstAt: string;
  scheduledAt?: string;
  approval?: { requestedAt: string; expiresAt?: string };
  progress?: Progress;
  result?: Result;
  /** Its events, in the order they happened. */
  events: RunEvent[];
}

const TYPE_ORDER: Record<string, number> = {
  ToolCallApprovalRequested: 0,
  ToolCallScheduled: 1,
  ToolCallProgress: 2,
  ToolResultReceived: 3,
};

/**
 * Events of one call in the order they happen: an approval asked, its scheduling, progress by
 * step, the result last (whatever clocks the events were dated by).
 */
export function compareEvents(a: RunEvent, b: RunEvent): number {
  const rank = (TYPE_ORDER[a.detailType] ?? 2) - (TYPE_ORDER[b.detailType] ?? 2);
  if (rank !== 0) return rank;
  return stepOf(a) - stepOf(b) || a.occurredAt.localeCompare(b.occurredAt);
}

function stepOf(event: RunEvent): number {
  const step = /\/progress\/(\d+)$/.exec(event.eventKey);
  return step ? Number(step[1]) : 0;
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" ? value : undefined;
const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;
const record = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

function who(value: unknown): Who | undefined {
  const found = record(value);
  const id = text(found?.id);
  return id ? { id, role: text(found?.role) ?? "" } : undefined;
}

function budgetOf(value: unknown): Budget | undefined {
  const found = record(value);
  if (!found) return undefined;
  const budget: Budget = {};
  for (const name of ["calls", "cost", "seconds"] as const) {
    const value = num(found[name]);
    if (value !== undefined) budget[name] = value;
  }
  return Object.keys(budget).length > 0 ? budget : undefined;
}

function failureOf(value: unknown): Failure | undefined {
  const found = record(value);
  const kind = text(found?.kind);
  if (!found || !kind) return undefined;
  const connection = record(found.connection);
  return {
    kind,
    message: text(found.message) ?? "",
    ...(typeof found.retryable === "boolean" ? { retryable: found.retryable } : {}),
    ...(num(found.retryAfterMs) !== undefined ? { retryAfterMs: num(found.retryAfterMs) } : {}),
    ...(text(found.recovery) ? { recovery: text(found.recovery) } : {}),
    ...(connection
      ? {
          connection: {
            ...(text(connection.provider) ? { provider: text(connection.provider) } : {}),
            ...(text(connection.reason) ? { reason: text(connection.reason) } : {}),
            ...(text(connection.connectUrl) ? { connectUrl: text(connection.connectUrl) } : {}),
          },
        }
      : {}),
  };
}

/** The result a ToolResultReceived carries. */
export function resultOf(detail: Record<string, unknown>): Result {
  const fallback = record(detail.fallback);
  const failure = failureOf(detail.failure);
  const budget = budgetOf(detail.budget);
  return {
    status: detail.status === "succeeded" ? "succeeded" : "failed",
    ...(text(detail.output) !== undefined ? { output: text(detail.output) } : {}),
    ...(failure ? { failure } : {}),
    cached: detail.cached === true,
    stale: detail.stale === true,
    truncated: detail.truncated === true,
    resultOmitted: detail.resultOmitted === true,
    ...(num(detail.durationMs) !== undefined ? { durationMs: num(detail.durationMs) } : {}),
    ...(num(detail.resultBytes) !== undefined ? { resultBytes: num(detail.resultBytes) } : {}),
    ...(text(detail.completedAt) ? { completedAt: text(detail.completedAt) } : {}),
    ...(fallback
      ? {
          fallback: {
            from: text(fallback.from) ?? "",
            to: text(fallback.to) ?? "",
            reason: text(fallback.reason) ?? "",
          },
        }
      : {}),
    ...(budget ? { budget } : {}),
  };
}

/** The progress a ToolCallProgress carries. */
export function progressOf(event: RunEvent): Progress {
  const { detail } = event;
  const total = num(detail.total);
  const message = text(detail.message);
  return {
    progress: num(detail.progress) ?? 0,
    ...(total !== undefined ? { total } : {}),
    ...(message !== undefined ? { message } : {}),
    reportedAt: text(detail.reportedAt) ?? event.occurredAt,
  };
}

/** A call's state from its events (in any order; they are sorted here). */
export function foldCall(callId: string, unsorted: readonly RunEvent[]): CallState {
  const events = [...unsorted].sort(compareEvents);
  const first = events[0];
  const state: CallState = {
    callId,
    toolId: "",
    hasInput: false,
    firstAt: first?.occurredAt ?? "",
    events,
  };
  for (const event of events) {
    const { detail } = event;
    state.toolId ||= text(detail.toolId) ?? "";
    state.toolset ??= text(detail.toolset);
    if (
      event.detailType === "ToolCallScheduled" ||
      event.detailType === "ToolCallApprovalRequested"
    ) {
      if ("input" in detail) {
        state.input = detail.input;
        state.hasInput = true;
      }
      state.requestedBy ??= who(detail.requestedBy);
      state.mode ??= text(detail.mode);
      state.parentCallId ??= text(detail.parentCallId);
    }
    if (event.detailType === "ToolCallApprovalRequested") {
      const approval = record(detail.approval);
      const expiresAt = text(approval?.expiresAt);
      state.approval = {
        requestedAt: event.occurredAt,
        ...(expiresAt ? { expiresAt } : {}),
      };
    } else if (event.detailType === "ToolCallScheduled") {
      state.scheduledAt = text(detail.scheduledAt) ?? event.occurredAt;
    } else if (event.detailType === "ToolCallProgress") {
      state.progress = progressOf(event);
    } else if (event.detailType === "ToolResultReceived") {
      state.result = resultOf(detail);
    }
  }
  return state;
}

export function phaseOf(call: CallState): CallPhase {
  if (call.result) {
    if (call.result.failure?.kind === "cancelled") return "cancelled";
    return call.result.status;
  }
  if (call.approval && !call.scheduledAt) return "awaiting_approval";
  return "running";
}

export const PHASE_LABEL: Record<CallPhase, string> = {
  awaiting_approval: "awaiting approval",
  running: "running",
  succeeded: "succeeded",
  failed: "failed",
  cancelled: "cancelled",
};

/** The run and call an event belongs to, when it names them. */
export function idsOf(event: RunEvent): { runId?: string; callId?: string } {
  return {
    ...(text(event.detail.parentRunId) ? { runId: text(event.detail.parentRunId) } : {}),
    ...(text(event.detail.callId) ? { callId: text(event.detail.callId) } : {}),
  };
}

/** Milliseconds between two instants, when both are dates. */
export function between(from: string | undefined, to: string | undefined): number | undefined {
  if (!from || !to) return undefined;
  const ms = new Date(to).getTime() - new Date(from).getTime();
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** The ids the API accepts for runs and calls (packages/wire/src/model/ids.ts). */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
