import { runId } from "@toolbus/wire/model";
import { z } from "zod";
import type { RunPolicy } from "../../schemas.js";
import { number, option } from "../arguments.js";
import { command } from "../command.js";
import { fields, json } from "../format.js";

// `toolbus runs ...`: a run's budget: its limits, what it used, and setting its own limits.

/** The run policy's limits as options, in the order the API lists them. */
export const RUN_LIMIT_OPTIONS = [
  "max-calls",
  "max-calls-per-tool",
  "max-seconds",
  "max-cost",
  "max-repeats",
] as const;

/** Each --max-* option's field in the API's run policy. */
const RUN_LIMITS = {
  "max-calls": "maxCalls",
  "max-calls-per-tool": "maxCallsPerTool",
  "max-seconds": "maxSeconds",
  "max-cost": "maxCost",
  "max-repeats": "maxRepeats",
} as const satisfies Record<(typeof RUN_LIMIT_OPTIONS)[number], keyof RunPolicy>;

export const runsCommands = {
  "runs show": command({
    usage: "runs show <runId>",
    summary: "A run's limits, what it used and has left, and its calls by status.",
    args: ["runId"],
    options: {},
    schema: z.object({ runId }),
    async run(args, { client, io, json: asJson }) {
      const run = await client.runs.get(args.runId);
      if (asJson) {
        io.stdout.write(json(run));
        return 0;
      }
      const pairs = limits;
      const { usage } = run;
      io.stdout.write(
        fields([
          ["Run", run.runId],
          ["Limits", pairs(run.policy) || "none"],
          ["Own limits", run.runPolicy ? pairs(run.runPolicy) || "none" : "none set"],
          [
            "Used",
            `${usage.calls} call(s), cost ${usage.cost}` +
              (usage.firstCallAt ? `, since ${usage.firstCallAt}` : ""),
          ],
          [
            "Left",
            // Whole seconds: what is left of maxSeconds is counted to the millisecond.
            pairs({
              ...run.remaining,
              ...(run.remaining.seconds !== undefined
                ? { seconds: Math.floor(run.remaining.seconds) }
                : {}),
            }) || "no limit",
          ],
          ["By tool", pairs(usage.perTool) || undefined],
          ["Calls", pairs(run.calls) || "none"],
        ]),
      );
      return 0;
    },
  }),

  "runs policy": command({
    usage:
      "runs policy <runId> [--max-calls <n>] [--max-calls-per-tool <n>] [--max-seconds <n>] [--max-cost <n>] [--max-repeats <n>]",
    summary:
      "Set a run's own limits: once, before or at its first call, only tighter than the stage's.",
    args: ["runId"],
    options: Object.fromEntries(RUN_LIMIT_OPTIONS.map((name) => [name, option.value])),
    help: [
      "--max-calls <n>            calls in the run, 1-1000000",
      "--max-calls-per-tool <n>   calls of any one tool in the run, 1-1000000",
      "--max-seconds <n>          seconds from the run's first call, 1-2592000 (30 days)",
      "--max-cost <n>             cost units (each tool's cost, default 1, summed), 1-1000000000",
      "--max-repeats <n>          runs of one tool with one input (the loop breaker), 1-1000",
      "At least one limit. A second, different policy for the run is refused (409), and so is",
      "a limit looser than the stage's (400). toolbus runs show <runId> shows what it used.",
    ],
    schema: z
      .object({
        runId,
        "max-calls": number("--max-calls", 1, 1_000_000, true).optional(),
        "max-calls-per-tool": number("--max-calls-per-tool", 1, 1_000_000, true).optional(),
        "max-seconds": number("--max-seconds", 1, 30 * 86_400, true).optional(),
        "max-cost": number("--max-cost", 1, 1_000_000_000, true).optional(),
        "max-repeats": number("--max-repeats", 1, 1_000, true).optional(),
      })
      .refine((v) => RUN_LIMIT_OPTIONS.some((option) => v[option] !== undefined), {
        message: `give at least one limit: ${RUN_LIMIT_OPTIONS.map((option) => `--${option}`).join(", ")}`,
      }),
    async run(args, { client, io, json: asJson }) {
      const policy = Object.fromEntries(
        RUN_LIMIT_OPTIONS.flatMap((option) =>
          args[option] === undefined ? [] : [[RUN_LIMITS[option], args[option]]],
        ),
      );
      const set = await client.runs.setPolicy(args.runId, policy);
      if (asJson) {
        io.stdout.write(json(set));
        return 0;
      }
      io.stdout.write(
        `${fields([
          ["Run", args.runId],
          ["Own limits", limits(set.runPolicy ?? {}) || "none"],
          ["Stage limits", limits(set.stagePolicy) || "none"],
          ["Limits", limits(set.policy) || "none"],
        ])}\nThe run works under these limits from now on; toolbus runs show ${args.runId} shows what it used.\n`,
      );
      return 0;
    },
  }),
};

/** `name value` pairs of the numbers set, e.g. `maxCalls 10, maxRepeats 2`; "" for none. */
function limits(record: Record<string, number | undefined>): string {
  return Object.entries(record)
    .filter((entry): entry is [string, number] => entry[1] !== undefined)
    .map(([name, value]) => `${name} ${value}`)
    .join(", ");
}
