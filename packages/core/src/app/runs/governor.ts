import type { Failure } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import {
  effectivePolicy,
  loosenedLimits,
  RUN_LIMITS,
  type RunBudget,
  type RunPolicy,
} from "@toolbus/wire/model/run";
import type { StageConfig } from "../../config";
import { ConflictError, ValidationError } from "../../errors";
import type { RunCount, RunStore, RunUsage } from "../../ports";

export interface RunGovernorDeps {
  runs: RunStore;
  config: StageConfig;
}

/** A call the run's policy lets through, with what is left; or refuses, with why. */
export type Admission =
  | { admitted: true; budget?: RunBudget; release(): Promise<void> }
  | { admitted: false; failure: Failure; budget?: RunBudget };

/** One call as the governor sees it. */
export interface Countable {
  parentRunId: string;
  toolId: string;
  inputHash: string;
  /** The tool's cost in the stage's units. */
  cost: number;
  at: Date;
}

/**
 * Per-run budgets and the loop breaker, for every client at once: each call is counted in
 * DynamoDB before it runs (one ADD that hands each caller its own number, so n concurrent calls
 * against a limit of n all run and the next is refused), and checked against the tighter of the
 * stage's policy and the run's own. A refused call is counted back out, so a run's usage is
 * what it ran. A repeat of a call id is counted back out too (`release`) once the store says
 * the call exists: it was counted when it was made.
 */
export class RunGovernor {
  constructor(private readonly deps: RunGovernorDeps) {}

  /** The run's own policy, set once; it may only tighten the stage's (a 400 names what not). */
  async setPolicy(runId: string, policy: RunPolicy): Promise<RunPolicy> {
    const loosened = loosenedLimits(this.stagePolicy(), policy);
    if (loosened.length > 0) {
      throw new ValidationError("A run's policy may only tighten the stage's.", {
        details: loosened.map((limit) => ({
          path: `policy.${limit}`,
          message: `at most ${this.stagePolicy()[limit]}, the stage's limit`,
        })),
      });
    }
    const outcome = await this.deps.runs.setPolicy(runId, policy);
    if (!outcome.set && JSON.stringify(outcome.policy) !== JSON.stringify(policy)) {
      throw new ConflictError(`Run ${runId} already has a policy; a run's policy is set once.`, {
        details: { policy: outcome.policy },
      });
    }
    return outcome.policy;
  }

  /** Whether the stage's policy limits every run: then every call has a budget to keep. */
  limitsEveryRun(): boolean {
    const policy = this.stagePolicy();
    return RUN_LIMITS.some((limit) => policy[limit] !== undefined);
  }

  /** Counts the call against its run and says whether it may run. */
  async admit(call: Countable): Promise<Admission> {
    const { runs } = this.deps;
    const at = call.at.toISOString();
    const counted = { toolId: call.toolId, cost: call.cost, at };
    const count = await runs.count(call.parentRunId, counted);
    const policy = effectivePolicy(this.stagePolicy(), count.policy);
    const budget = budgetOf(policy, count, call.at);
    const left = budgetOf(policy, without(count, call), call.at);
    const uncount = () => runs.count(call.parentRunId, counted, -1).then(() => undefined);
    const refusal = refusalOf(policy, count, call);
    if (refusal) {
      await uncount();
      return { admitted: false, failure: refusal, ...(left ? { budget: left } : {}) };
    }
    if (policy.maxRepeats !== undefined) {
      const repeats = await runs.countRepeat(call.parentRunId, call.toolId, call.inputHash);
      if (repeats > policy.maxRepeats) {
        await Promise.all([
          uncount(),
          runs.countRepeat(call.parentRunId, call.toolId, call.inputHash, -1),
        ]);
        return {
          admitted: false,
          failure: Failures.loopDetected(
            `${call.toolId} already ran ${policy.maxRepeats} times with this input in run ${call.parentRunId} (maxRepeats): use what those calls returned, or change the input.`,
          ),
          ...(left ? { budget: left } : {}),
        };
      }
    }
    return {
      admitted: true,
      ...(budget ? { budget } : {}),
      // A call id that turns out to exist already is the same call: it never counts.
      release: async () => {
        await Promise.all([
          uncount(),
          ...(policy.maxRepeats !== undefined
            ? [runs.countRepeat(call.parentRunId, call.toolId, call.inputHash, -1)]
            : []),
        ]);
      },
    };
  }

  /** The run's policy (its own and the stage's, merged), what it used, and what is left. */
  async describe(runId: string, now: Date) {
    const usage: RunUsage | undefined = await this.deps.runs.usage(runId);
    const policy = effectivePolicy(this.stagePolicy(), usage?.policy);
    const count: RunCount = {
      calls: usage?.calls ?? 0,
      toolCalls: 0,
      cost: usage?.cost ?? 0,
      firstCallAt: usage?.firstCallAt ?? now.toISOString(),
    };
    return {
      policy,
      runPolicy: usage?.policy ?? null,
      stagePolicy: this.stagePolicy(),
      usage: {
        calls: count.calls,
        cost: count.cost,
        firstCallAt: usage?.firstCallAt ?? null,
        perTool: usage?.perTool ?? {},
      },
      remaining: budgetOf(policy, count, now) ?? {},
    };
  }

  private stagePolicy(): RunPolicy {
    return this.deps.config.runs.policy;
  }
}

/** What is left after the counted call, by the limits that apply; undefined when none does. */
function budgetOf(policy: RunPolicy, count: RunCount, at: Date): RunBudget | undefined {
  const budget: RunBudget = {};
  if (policy.maxCalls !== undefined) budget.calls = Math.max(0, policy.maxCalls - count.calls);
  if (policy.maxCost !== undefined) budget.cost = Math.max(0, policy.maxCost - count.cost);
  if (policy.maxSeconds !== undefined) {
    const elapsed = (at.getTime() - Date.parse(count.firstCallAt)) / 1000;
    budget.seconds = Math.max(0, Math.round((policy.maxSeconds - elapsed) * 1000) / 1000);
  }
  return Object.keys(budget).length > 0 ? budget : undefined;
}

/** The totals without the counted call: what a refused call leaves, since it is taken back. */
function without(count: RunCount, call: Countable): RunCount {
  return {
    ...count,
    calls: count.calls - 1,
    toolCalls: count.toolCalls - 1,
    cost: count.cost - call.cost,
  };
}

function refusalOf(policy: RunPolicy, count: RunCount, call: Countable): Failure | undefined {
  const run = call.parentRunId;
  if (policy.maxCalls !== undefined && count.calls > policy.maxCalls) {
    return Failures.budgetExceeded(
      `Run ${run} has made its ${policy.maxCalls} calls (maxCalls): finish with what you have.`,
    );
  }
  if (policy.maxSeconds !== undefined) {
    const elapsed = (call.at.getTime() - Date.parse(count.firstCallAt)) / 1000;
    if (elapsed > policy.maxSeconds) {
      return Failures.budgetExceeded(
        `Run ${run} is past its ${policy.maxSeconds} seconds (maxSeconds): finish with what you have.`,
      );
    }
  }
  if (policy.maxCost !== undefined && count.cost > policy.maxCost) {
    return Failures.budgetExceeded(
      `${call.toolId} costs ${call.cost}, more than run ${run} has left of its ${policy.maxCost} (maxCost): finish, or use a cheaper tool.`,
    );
  }
  if (policy.maxCallsPerTool !== undefined && count.toolCalls > policy.maxCallsPerTool) {
    return Failures.budgetExceeded(
      `Run ${run} has made its ${policy.maxCallsPerTool} calls of ${call.toolId} (maxCallsPerTool): plan without it.`,
      { recovery: "replan" },
    );
  }
  return undefined;
}
