import type { StageConfig } from "../../config";
import { ConflictError, NotFoundError } from "../../errors";
import type { EventPublisher } from "../../events/publisher";
import type { CallRecord, Principal } from "../../model/call";
import { approvalEventKey } from "../../model/events";
import { Failures } from "../../model/failure";
import type { ToolSpec } from "../../model/tool";
import type { CallStore } from "../../ports";
import { publishResult } from "../../runtime/tool-handler";
import { announceScheduled, scheduledDetail } from "./dispatch";
import { refusalResult } from "./refusal";
import { statusUrl } from "./status";

/** Where a person approves or denies a call (POST, `/approve` or `/deny`). */
export const decideUrl = (call: Pick<CallRecord, "parentRunId" | "callId">) =>
  `${statusUrl(call)}/approve`;

/** Whether the stage wants a person to approve this tool's calls by this caller. */
export function needsApproval(config: StageConfig, spec: ToolSpec, principal: Principal): boolean {
  return config.approvals.rules.some(
    (rule) =>
      (rule.roles === undefined || rule.roles.includes(principal.role)) &&
      (rule.tools?.includes(spec.id) ||
        rule.toolsets?.includes(spec.toolset) ||
        (rule.writes === true && !spec.annotations.readOnly)),
  );
}

/** The approval a new call waits for: from now until the stage's expiry. */
export function approvalFor(config: StageConfig, now: Date) {
  return {
    requestedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + config.approvals.expireAfterMinutes * 60_000).toISOString(),
  };
}

/** Tells subscribers (and chat bots) that a call waits for a person: ToolCallApprovalRequested. */
export async function announceApprovalRequested(
  publisher: EventPublisher,
  call: CallRecord,
): Promise<void> {
  if (!call.approval) return;
  await publisher.publish([
    {
      detailType: "ToolCallApprovalRequested",
      detail: {
        ...scheduledDetail(call),
        eventKey: approvalEventKey(call.parentRunId, call.callId),
        approval: { expiresAt: call.approval.expiresAt, decideUrl: decideUrl(call) },
      },
    },
  ]);
}

export interface ApprovalDeps {
  calls: CallStore;
  publisher: EventPublisher;
  now?: () => Date;
}

/**
 * A person's decision on a call awaiting approval, made once: approved, the call goes to its
 * handler through the bus (ToolCallScheduled); denied, it fails as `denied` and both its
 * events go out. Who may decide is the route's permission (`approve`).
 */
export async function decideApproval(
  deps: ApprovalDeps,
  principal: Principal,
  ids: { runId: string; callId: string },
  decision: { approved: boolean; reason?: string | undefined },
): Promise<CallRecord> {
  const now = (deps.now ?? (() => new Date()))();
  const stored = await deps.calls.get(ids.runId, ids.callId);
  if (!stored) throw new NotFoundError(`Call ${ids.callId} does not exist in run ${ids.runId}.`);
  const made = {
    approved: decision.approved,
    by: { id: principal.id, role: principal.role },
    at: now.toISOString(),
    ...(decision.reason ? { reason: decision.reason } : {}),
  };
  const failure = decision.approved
    ? undefined
    : Failures.denied(
        `A person denied ${stored.toolId} this call${decision.reason ? `: ${decision.reason}` : "."} Do it another way, or not at all.`,
      );
  const decided = await deps.calls.decide(
    ids.runId,
    ids.callId,
    made,
    failure && refusalResult(stored, failure, now),
  );
  if (!decided) {
    throw new ConflictError(
      `Call ${ids.callId} is not awaiting approval (it is ${stored.status}); a decision is final.`,
      {
        details: {
          status: stored.status,
          ...(stored.approval ? { approval: stored.approval } : {}),
        },
      },
    );
  }
  await announceDecided(deps.publisher, decided);
  return decided;
}

/** Fails the calls whose approval expired undecided (the sweeper runs this). How many. */
export async function expireApprovals(deps: ApprovalDeps, limit = 100): Promise<number> {
  const now = (deps.now ?? (() => new Date()))();
  let expired = 0;
  for (const call of await deps.calls.listAwaitingApproval(now.toISOString(), limit)) {
    const failure = Failures.approvalExpired(
      `Nobody approved ${call.toolId} within its time: do it another way, or ask again later.`,
    );
    const decided = await deps.calls.decide(
      call.parentRunId,
      call.callId,
      { approved: false, at: now.toISOString(), reason: "expired" },
      refusalResult(call, failure, now),
    );
    if (!decided) continue;
    await announceDecided(deps.publisher, decided);
    expired++;
  }
  return expired;
}

async function announceDecided(publisher: EventPublisher, call: CallRecord): Promise<void> {
  await announceScheduled(publisher, call);
  if (call.result) await publishResult(call, call.result, publisher);
}
