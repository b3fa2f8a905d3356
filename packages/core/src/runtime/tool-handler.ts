import type { InProcessContext } from "../app/calls/dispatch";
import type { CapabilityDetector } from "../app/capabilities/detectors";
import type { StageConfig } from "../config";
import { ValidationError, zodIssues } from "../errors";
import type { EventPublisher } from "../events/publisher";
import { fitResultEvent } from "../events/size";
import type { CallRecord, CallResult } from "../model/call";
import {
  resultEventKey,
  type ToolCallScheduled,
  type ToolResultReceived,
  toolCallScheduled,
} from "../model/events";
import type { ToolPolicy } from "../model/policy";
import { type CallObservers, reportFinished } from "../observability/calls";
import type { HttpClient, SecretSource } from "../outbound/types";
import type { CallStore, RateLimiter, ResultCache } from "../ports";
import { type AnyToolDefinition, toolPolicyOf } from "../tool-definition";
import { type PolicyOutcome, runWithPolicies } from "./policies";
import { resultSize, storeResult, unstorableResult } from "./store-result";

export interface ToolRuntimeDeps extends CallObservers {
  calls: CallStore;
  publisher: EventPublisher;
  config: StageConfig;
  http: HttpClient;
  secret: SecretSource;
  capabilities: readonly CapabilityDetector[];
  cache?: ResultCache;
  rateLimiter?: RateLimiter;
  /** Tools that may stand in for others (a spec's `fallback`), by id. */
  fallbacks?: ReadonlyMap<string, AnyToolDefinition>;
  now?: () => Date;
}

/** Grace past the tool's own timeout before a RUNNING call counts as stuck. */
const DEADLINE_GRACE_MS = 30_000;

/** When a call claimed now counts as stuck: its handler died. Whoever claims uses this. */
export function claimDeadline(now: Date, timeoutMs: number): string {
  return new Date(now.getTime() + timeoutMs + DEADLINE_GRACE_MS).toISOString();
}

/** What running a call needs of it; a directly dispatched call has it all in its event. */
export type RunnableCall = Pick<
  CallRecord,
  | "parentRunId"
  | "callId"
  | "toolId"
  | "toolset"
  | "input"
  | "requestedBy"
  | "scheduledAt"
  | "trace"
  | "fallbackAccess"
>;

/**
 * Turns a tool into its handler. Delivery is at least once, so the handler claims the call
 * first (PENDING -> RUNNING, conditional): a duplicate delivery finds it claimed and runs
 * nothing. If a previous delivery stored the result but died before publishing it, the
 * duplicate finishes the publish, under the same event key. A directly dispatched call comes
 * already claimed, by the dispatcher that created it RUNNING. Resolves with the finished call.
 */
export function createToolHandler(
  tool: AnyToolDefinition,
  deps: () => ToolRuntimeDeps | Promise<ToolRuntimeDeps>,
) {
  return async (event: unknown, context?: unknown): Promise<CallRecord | undefined> => {
    const runtime = await deps();
    const detail = parseScheduled(event, tool.spec.id);
    return runScheduledCall(
      detail,
      runtime,
      toolPolicyOf(tool),
      (claimed, now) => runWithPolicies(tool, claimed, { ...runtime, now }),
      context,
    );
  };
}

/**
 * The lifecycle every handler shares: claim (a duplicate delivery runs nothing, but finishes
 * an interrupted publish), run, store the result, announce it.
 */
export async function runScheduledCall(
  detail: ToolCallScheduled,
  runtime: ToolRuntimeDeps,
  policy: Pick<ToolPolicy, "timeoutMs" | "cache">,
  run: (call: RunnableCall, now: () => Date) => Promise<PolicyOutcome>,
  context?: unknown,
): Promise<CallRecord | undefined> {
  const { calls, publisher, now = () => new Date() } = runtime;
  const claimed =
    detail.dispatch === "direct"
      ? detail
      : await calls.claim(
          detail.parentRunId,
          detail.callId,
          claimDeadline(now(), policy.timeoutMs),
        );
  if (!claimed) {
    const existing = await calls.get(detail.parentRunId, detail.callId);
    if (existing?.result && !existing.resultPublishedAt) {
      await publishResult(existing, existing.result, publisher);
    }
    return undefined;
  }
  const started = performance.now();
  const { execution, cached, stale, fallback } = await run(claimed, now);
  const body = execution.ok
    ? { output: execution.output, data: execution.data, citations: execution.citations }
    : { output: execution.failure.message, data: null, citations: [] };
  const bytes = resultSize(body);
  const produced: CallResult = {
    status: execution.ok ? "succeeded" : "failed",
    ...body,
    ...(execution.ok ? {} : { failure: execution.failure }),
    cached,
    stale,
    ...(fallback ? { fallback } : {}),
    durationMs: Math.round(performance.now() - started),
    resultBytes: bytes ?? 0,
    truncated: false,
    completedAt: completionTime(claimed.scheduledAt, now()),
  };
  const result =
    bytes === undefined ? unstorableResult(produced, "it is nested too deeply") : produced;
  const completed = await storeResult(calls, claimed, result, runtime.log);
  // Not running any more: a sweeper already failed it as stuck, and published that.
  if (!completed) return undefined;
  // Finished once stored: counted before the caller is answered, whatever the announcing does.
  reportFinished(runtime, completed, { cacheable: policy.cache !== undefined });
  onCompletedHook(context)?.(completed);
  await publishResult(completed, completed.result ?? result, publisher);
  return completed;
}

/** The in-process dispatcher's hook, when this handler runs in the caller's process. */
function onCompletedHook(context: unknown): InProcessContext["onCompleted"] {
  const hook = (context as InProcessContext | undefined)?.onCompleted;
  return typeof hook === "function" ? hook : undefined;
}

/**
 * Announces a stored result. The recorder marks the call once the result is in the run's log;
 * until then a redelivery, or the sweeper, announces it again (the same event key).
 */
export async function publishResult(
  call: CallRecord,
  result: CallResult,
  publisher: EventPublisher,
): Promise<void> {
  const detail: ToolResultReceived = fitResultEvent({
    ...result,
    eventKey: resultEventKey(call.parentRunId, call.callId),
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    resultOmitted: false,
    ...(call.trace ? { trace: call.trace } : {}),
    ...(call.budget ? { budget: call.budget } : {}),
  });
  await publisher.publish([{ detailType: "ToolResultReceived", detail }]);
}

/** Strictly after scheduledAt, so a run's log (ordered by time) never shows a result first. */
export function completionTime(scheduledAt: string, now: Date): string {
  const floor = Date.parse(scheduledAt) + 1;
  return new Date(Math.max(now.getTime(), floor)).toISOString();
}

/** The ToolCallScheduled detail of a bus event; with `expectedTool`, it must be for that tool. */
export function parseScheduled(event: unknown, expectedTool?: string): ToolCallScheduled {
  const envelope = event as { "detail-type"?: unknown; detail?: unknown } | null;
  if (envelope?.["detail-type"] !== "ToolCallScheduled") {
    throw new ValidationError("Expected a ToolCallScheduled event.");
  }
  const parsed = toolCallScheduled.safeParse(envelope.detail);
  if (!parsed.success) {
    throw new ValidationError("The ToolCallScheduled detail is not valid.", {
      details: zodIssues(parsed.error.issues, "(detail)"),
    });
  }
  if (expectedTool !== undefined && parsed.data.toolId !== expectedTool) {
    // A rule pointing at the wrong handler: fail loudly so the event is dead-lettered.
    throw new ValidationError(`This handler runs ${expectedTool}, not ${parsed.data.toolId}.`);
  }
  return parsed.data;
}
