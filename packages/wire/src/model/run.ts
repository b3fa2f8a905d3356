import * as z from "zod";

/**
 * What one agent run may spend, enforced by the platform for every client: calls in all, calls
 * of one tool, seconds from the run's first call, cost units (each tool declares its `cost`),
 * and the loop breaker: how many times one tool may run with one canonical input. Absent = no
 * limit. The stage sets one (config `runs.policy`); a run may only tighten it.
 */
export const runPolicy = z.strictObject({
  maxCalls: z.number().int().min(1).max(1_000_000).optional(),
  maxCallsPerTool: z.number().int().min(1).max(1_000_000).optional(),
  maxSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  maxCost: z.number().int().min(1).max(1_000_000_000).optional(),
  maxRepeats: z.number().int().min(1).max(1_000).optional(),
});
export type RunPolicy = z.infer<typeof runPolicy>;

export const RUN_LIMITS = [
  "maxCalls",
  "maxCallsPerTool",
  "maxSeconds",
  "maxCost",
  "maxRepeats",
] as const satisfies readonly (keyof RunPolicy)[];
export type RunLimit = (typeof RUN_LIMITS)[number];

/** The limits a run works under: the tighter of the stage's and the run's, limit by limit. */
export function effectivePolicy(stage: RunPolicy, run: RunPolicy | undefined): RunPolicy {
  const merged: RunPolicy = {};
  for (const limit of RUN_LIMITS) {
    const values = [stage[limit], run?.[limit]].filter((v): v is number => v !== undefined);
    if (values.length > 0) merged[limit] = Math.min(...values);
  }
  return merged;
}

/** The limits a run's own policy would loosen compared with the stage's (one it omits, it inherits). */
export function loosenedLimits(stage: RunPolicy, run: RunPolicy): RunLimit[] {
  return RUN_LIMITS.filter((limit) => {
    const ceiling = stage[limit];
    const asked = run[limit];
    return ceiling !== undefined && asked !== undefined && asked > ceiling;
  });
}

/** What a run has left, as every result reports it; only the limits that apply. */
export const runBudget = z.object({
  calls: z.number().int().optional(),
  cost: z.number().optional(),
  seconds: z.number().optional(),
});
export type RunBudget = z.infer<typeof runBudget>;
