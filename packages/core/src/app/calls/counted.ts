import type { CallRecord, Failure } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { RunBudget } from "@toolbus/wire/model/run";
import { callFields } from "../../observability/calls";
import type { Logger } from "../../observability/log";
import type { CallStore } from "../../ports";
import type { Admission, Countable, RunGovernor } from "../runs/governor";

/** How storing a new call against its run's count came out; the call service acts on it. */
export type Stored =
  /** Stored, counted, `budget` set on the record where its run has one. */
  | { outcome: "stored" }
  /** The same call id again: the call already made (it was counted when it was made). */
  | { outcome: "exists"; call: CallRecord }
  /** Refused by its run's policy; `made`: stored already with that status, to be written over. */
  | { outcome: "refused"; failure: Failure; budget?: RunBudget; made?: CallRecord["status"] }
  /** Stored, then moved on before what its count decided was written: read where it is. */
  | { outcome: "moved" };

export interface CountedDeps {
  calls: Pick<CallStore, "create" | "keepBudget">;
  log?: Logger | undefined;
}

/**
 * Stores a new call and counts it against its run. `together`: both at once, for a call run
 * at once where the stage sets no limit (a run then has limits only if it set its own, and
 * most set none), so its caller waits for one write instead of two; otherwise the count goes
 * first, and every call has the budget it leaves stored with it.
 */
export async function storeCounted(
  deps: CountedDeps,
  governor: RunGovernor | undefined,
  countable: Countable,
  record: CallRecord,
  together: boolean,
): Promise<Stored> {
  if (!governor) return created(deps, record, undefined);
  return together
    ? countWhileCreating(deps, governor, countable, record)
    : countThenCreate(deps, governor, countable, record);
}

async function created(
  deps: CountedDeps,
  record: CallRecord,
  admission: Extract<Admission, { admitted: true }> | undefined,
): Promise<Stored> {
  const outcome = await deps.calls.create(record);
  if (outcome.created) return { outcome: "stored" };
  await admission?.release();
  return { outcome: "exists", call: outcome.call };
}

async function countThenCreate(
  deps: CountedDeps,
  governor: RunGovernor,
  countable: Countable,
  record: CallRecord,
): Promise<Stored> {
  const admission = await governor.admit(countable);
  if (!admission.admitted) {
    return { outcome: "refused", failure: admission.failure, ...budgetOf(admission) };
  }
  if (admission.budget) record.budget = admission.budget;
  return created(deps, record, admission);
}

/**
 * Nothing has run when the count's answer comes, so a call it refuses is written over as
 * refused, and one it leaves a budget to gets the budget, before it is dispatched: one write
 * more, for the runs that set limits of their own. A call stored but not counted (the count
 * failed) must not run uncounted: it fails as refused calls do.
 */
async function countWhileCreating(
  deps: CountedDeps,
  governor: RunGovernor,
  countable: Countable,
  record: CallRecord,
): Promise<Stored> {
  const [counted, made] = await Promise.allSettled([
    governor.admit(countable),
    deps.calls.create(record),
  ]);
  const admission = counted.status === "fulfilled" ? counted.value : undefined;
  const admitted = admission?.admitted ? admission : undefined;
  if (made.status === "rejected") {
    await admitted?.release();
    throw made.reason;
  }
  if (!made.value.created) {
    await admitted?.release();
    return { outcome: "exists", call: made.value.call };
  }
  if (!admission) {
    deps.log?.error("A call's run could not be counted: the call fails unrun", {
      ...callFields(record),
      error: (counted as PromiseRejectedResult).reason,
    });
    const failure = Failures.internal(
      `Run ${record.parentRunId}'s usage could not be counted, so the call did not run. Call again with a new call id.`,
      { retryable: true },
    );
    return { outcome: "refused", failure, made: record.status };
  }
  if (!admission.admitted) {
    return {
      outcome: "refused",
      failure: admission.failure,
      ...budgetOf(admission),
      made: record.status,
    };
  }
  if (!admission.budget) return { outcome: "stored" };
  try {
    // A cancel asked for meanwhile is kept: the call then starts, sees it and stops.
    if (!(await deps.calls.keepBudget(record, admission.budget))) return { outcome: "moved" };
  } catch (error) {
    // Not dispatched: it stays unrun until the sweeper fails it, so it does not count.
    await admission.release();
    throw error;
  }
  record.budget = admission.budget;
  return { outcome: "stored" };
}

const budgetOf = (admission: Admission) => (admission.budget ? { budget: admission.budget } : {});
