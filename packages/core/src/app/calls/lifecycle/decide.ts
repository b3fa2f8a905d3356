import type { CallRecord, Principal } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import { ConflictError, NotFoundError } from "../../../errors";
import type { CallStore, EventSink } from "../../../ports";
import { announceFinished } from "./announce";
import { failedResult } from "./records";

export interface DecisionDeps {
  calls: CallStore;
  bus: EventSink;
  now?: () => Date;
}

/**
 * A person's decision on a call awaiting approval, made once: approved, the call goes to its
 * handler through the bus (ToolCallScheduled); denied, it fails as `denied` and both its
 * events go out. Who may decide is the route's permission (`approve`).
 */
export async function decideApproval(
  deps: DecisionDeps,
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
    failure && failedResult(stored, failure, now),
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
  // Approved: its start, for the bus to deliver. Denied or expired: its start and its end.
  await announceFinished(deps.bus, decided);
  return decided;
}

/** Fails the calls whose approval expired undecided (the sweeper runs this). How many. */
export async function expireApprovals(deps: DecisionDeps, limit = 100): Promise<number> {
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
      failedResult(call, failure, now),
    );
    if (!decided) continue;
    await announceFinished(deps.bus, decided);
    expired++;
  }
  return expired;
}
