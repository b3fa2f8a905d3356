import { resolve } from "node:path";
import { runId, subscriptionId } from "@toolbus/wire/model";
import { z } from "zod";
import type { SubscriptionRequest } from "../../schemas.js";
import { cursorArg, isoArg, number, option, text } from "../arguments.js";
import { command } from "../command.js";
import type { CommandIo } from "../context.js";
import { UsageError } from "../errors.js";
import { json } from "../format.js";
import { parseJson, readAll, readJsonFile } from "../input.js";
import {
  failuresTable,
  subscriptionFields,
  subscriptionStatus,
  subscriptionTable,
  withSecret,
} from "../subscriptions.js";

// `toolbus subscriptions ...`: webhooks, buses and queues that get the events a pattern
// matches, their signing secrets, and their dead letters. How one is shown is in
// ../subscriptions.ts.

/** Made by Toolbus (`sub_` and 24 hex digits), never chosen: anything else is a typo. */
const subscriptionIdArg = text.pipe(subscriptionId);

/**
 * One target of three. The API judges the rest (https, the stage's allow-list, the exact ARN
 * and queue URL shapes) and names what is wrong; these catch what is plainly not one.
 */
const targets = {
  webhook: z
    .url({ protocol: /^https?$/, error: "an http(s) URL" })
    .max(2048)
    .optional(),
  "bus-arn": text
    .regex(/^arn:aws[a-z-]*:events:/, "an EventBridge bus ARN (arn:aws:events:...:event-bus/...)")
    .optional(),
  "queue-url": z
    .url({
      protocol: /^https$/,
      error: "an SQS queue URL (https://sqs.<region>.amazonaws.com/...)",
    })
    .optional(),
};
type TargetOption = keyof typeof targets;
const TARGET_OPTIONS = Object.keys(targets) as TargetOption[];

const createSchema = z
  .object({
    name: z.string().min(1).max(128, "at most 128 characters").optional(),
    pattern: z.string().optional(),
    "pattern-file": z.string().min(1).optional(),
    ...targets,
  })
  .refine((v) => v.name !== undefined, { message: "--name is required", path: ["name"] })
  .refine((v) => (v.pattern === undefined) !== (v["pattern-file"] === undefined), {
    // No path: the message names both options, and a label in front would repeat one.
    message: "give --pattern or --pattern-file (one of them)",
  })
  .refine((v) => TARGET_OPTIONS.filter((option) => v[option] !== undefined).length === 1, {
    message: "give one target: --webhook, --bus-arn or --queue-url",
  });
type CreateArgs = z.output<typeof createSchema>;

/** The commands that take just a subscription's id. */
const byId = { args: ["id"], options: {}, schema: z.object({ id: subscriptionIdArg }) } as const;

export const subscriptionsCommands = {
  "subscriptions create": command({
    usage:
      "subscriptions create --name <name> (--pattern '<json>' | --pattern-file <file>) (--webhook <url> | --bus-arn <arn> | --queue-url <url>)",
    summary:
      "Subscribe a webhook, bus or queue to the events a pattern matches; the secret is shown once.",
    args: [],
    options: {
      name: option.value,
      pattern: option.value,
      "pattern-file": option.value,
      webhook: option.value,
      "bus-arn": option.value,
      "queue-url": option.value,
    },
    help: [
      "--name <name>            what the subscription is for, 1-128 characters",
      "--pattern '<json>'       an EventBridge event pattern over Toolbus's events, e.g.",
      '                         \'{"detail-type":["ToolResultReceived"],"detail":{"status":["failed"]}}\'',
      "--pattern-file <file>    read the pattern from a JSON file; - reads standard input",
      "--webhook <url>          POST each event here, signed the Standard Webhooks way",
      "--bus-arn <arn>          put each event on this EventBridge bus (the stage must allow it)",
      "--queue-url <url>        send each event to this SQS queue (the stage must allow it)",
    ],
    schema: createSchema,
    async run(args, { client, io, json: asJson }) {
      const pattern = await readPattern(args, io);
      const created = await client.subscriptions.create({
        name: args.name as string,
        pattern,
        target: targetOf(args),
      });
      io.stdout.write(
        asJson
          ? json(created)
          : withSecret(
              created,
              "Keep the secret now: it will not be shown again. Receivers check each delivery's\nsignature with it (Standard Webhooks); toolbus subscriptions rotate-secret makes a new one.",
            ),
      );
      return 0;
    },
  }),

  "subscriptions list": command({
    usage: "subscriptions list",
    summary: "List your subscriptions (an admin: all) with status, target and failure streak.",
    args: [],
    options: {},
    schema: z.object({}),
    async run(_args, { client, io, json: asJson }) {
      const subscriptions = await client.subscriptions.list();
      if (asJson) io.stdout.write(json(subscriptions));
      else if (subscriptions.length === 0) {
        io.stdout.write("No subscriptions yet: toolbus subscriptions create.\n");
      } else io.stdout.write(subscriptionTable(subscriptions));
      return 0;
    },
  }),

  "subscriptions show": command({
    usage: "subscriptions show <id>",
    summary: "Show a subscription: its pattern, target, status and failure streak.",
    ...byId,
    async run(args, { client, io, json: asJson }) {
      const subscription = await client.subscriptions.get(args.id);
      io.stdout.write(asJson ? json(subscription) : subscriptionFields(subscription));
      return 0;
    },
  }),

  "subscriptions pause": command({
    usage: "subscriptions pause <id>",
    summary: "Pause a subscription: events matched meanwhile are not queued.",
    ...byId,
    async run(args, { client, io, json: asJson }) {
      const paused = await client.subscriptions.pause(args.id);
      io.stdout.write(
        asJson
          ? json(paused)
          : `Paused subscription ${paused.id} (${paused.name}): events matched meanwhile are not queued.\n`,
      );
      return 0;
    },
  }),

  "subscriptions resume": command({
    usage: "subscriptions resume <id>",
    summary: "Resume a subscription, with a clean failure streak.",
    ...byId,
    async run(args, { client, io, json: asJson }) {
      const resumed = await client.subscriptions.resume(args.id);
      io.stdout.write(
        asJson
          ? json(resumed)
          : `Resumed subscription ${resumed.id} (${resumed.name}): ${subscriptionStatus(resumed)}, failure streak ${resumed.failureStreak}.\n`,
      );
      return 0;
    },
  }),

  "subscriptions delete": command({
    usage: "subscriptions delete <id>",
    summary: "Delete a subscription.",
    ...byId,
    async run(args, { client, io, json: asJson }) {
      await client.subscriptions.remove(args.id);
      // The API answers 204 with no body: --json says what was deleted.
      io.stdout.write(asJson ? json({ deleted: args.id }) : `Deleted subscription ${args.id}.\n`);
      return 0;
    },
  }),

  "subscriptions rotate-secret": command({
    usage: "subscriptions rotate-secret <id>",
    summary: "Make a new signing secret, shown once; the old one signs beside it for 24 hours.",
    ...byId,
    async run(args, { client, io, json: asJson }) {
      const rotated = await client.subscriptions.rotateSecret(args.id);
      io.stdout.write(
        asJson
          ? json(rotated)
          : withSecret(
              rotated,
              "Keep the new secret now: it will not be shown again. The old one signs beside it\nfor 24 hours, time to give the new one to the receiver.",
            ),
      );
      return 0;
    },
  }),

  "subscriptions failures": command({
    usage: "subscriptions failures <id> [--limit <n>] [--cursor <c>]",
    summary: "List a subscription's dead letters: deliveries that failed until given up on.",
    args: ["id"],
    options: { limit: option.value, cursor: option.value },
    help: [
      "--limit <n>      page size, 1-100 (default 50)",
      "--cursor <c>     the next page, as the previous one said",
    ],
    schema: z.object({
      id: subscriptionIdArg,
      limit: number("--limit", 1, 100, true).optional(),
      cursor: cursorArg.optional(),
    }),
    async run(args, { client, io, json: asJson }) {
      const page = await client.subscriptions.failures(args.id, {
        ...(args.limit ? { limit: args.limit } : {}),
        ...(args.cursor ? { cursor: args.cursor } : {}),
      });
      if (asJson) {
        io.stdout.write(json(page));
        return 0;
      }
      io.stdout.write(
        page.failures.length > 0
          ? failuresTable(page.failures)
          : `No dead letters for subscription ${args.id}.\n`,
      );
      if (page.cursor) {
        const limit = args.limit ? ` --limit ${args.limit}` : "";
        io.stderr.write(
          `More: toolbus subscriptions failures ${args.id}${limit} --cursor ${page.cursor}\n`,
        );
      }
      return 0;
    },
  }),

  "subscriptions redrive": command({
    usage: "subscriptions redrive <id> [--event-key <key> ...]",
    summary: "Send dead letters again, with a fresh retry window (all, or the keys given).",
    args: ["id"],
    options: { "event-key": option.repeated },
    help: ["--event-key <key>   only this dead letter (see subscriptions failures); repeatable"],
    schema: z.object({
      id: subscriptionIdArg,
      "event-key": z
        .array(z.string().min(1).max(512, "an event key is at most 512 characters"))
        .max(100, "at most 100 event keys at once")
        .optional(),
    }),
    async run(args, { client, io, json: asJson }) {
      const redriven = await client.subscriptions.redrive(args.id, args["event-key"]);
      if (asJson) io.stdout.write(json({ redriven }));
      else if (redriven === 0) {
        io.stdout.write(
          args["event-key"]
            ? `None of those event keys is a dead letter of subscription ${args.id}.\n`
            : `Subscription ${args.id} has no dead letters to redrive.\n`,
        );
      } else {
        io.stdout.write(
          `Redrove ${redriven} dead letter${redriven === 1 ? "" : "s"} of subscription ${args.id}: they go out again with the next retry run, under the same webhook-id.\n`,
        );
      }
      return 0;
    },
  }),

  "subscriptions replay": command({
    usage: "subscriptions replay <id> (--run <runId> | --from <iso> [--to <iso>])",
    summary: "Send logged events that the pattern matches again, marked as a replay.",
    args: ["id"],
    options: { run: option.value, from: option.value, to: option.value },
    help: [
      "--run <runId>    the run whose events go out again (with the next retry run, within a",
      "                 minute; each with replay: true and the webhook-id it had the first time)",
      "--from <iso>     instead, the events the stage recorded from this time ...",
      "--to <iso>       ... to this one (default: now)",
    ],
    schema: z
      .object({
        id: subscriptionIdArg,
        run: runId.optional(),
        from: isoArg.optional(),
        to: isoArg.optional(),
      })
      .refine((v) => (v.run === undefined) !== (v.from === undefined), {
        message: "give --run <runId> or --from <iso>, not both",
        path: ["run"],
      })
      .refine((v) => v.to === undefined || v.from !== undefined, {
        message: "--to needs --from",
        path: ["to"],
      }),
    async run(args, { client, io, json: asJson }) {
      const window = args.from
        ? { from: args.from, ...(args.to ? { to: args.to } : {}) }
        : undefined;
      const replay = await client.subscriptions.replay(args.id, window ?? (args.run as string));
      const source = window
        ? `the ${replay.events} event${replay.events === 1 ? "" : "s"} recorded from ${window.from}${window.to ? ` to ${window.to}` : ""}`
        : `run ${args.run}'s ${replay.events} logged event${replay.events === 1 ? "" : "s"}`;
      const more =
        replay.complete === false
          ? " The replay stopped at its limit: replay again from the last event's time for the rest."
          : "";
      io.stdout.write(
        asJson
          ? json(replay)
          : `Queued ${replay.queued} of ${source} for subscription ${args.id} (replay ${replay.replayId}): they go out with the next retry run, marked as replays.${more}\n`,
      );
      return 0;
    },
  }),
};

/** The pattern from --pattern or --pattern-file, as a JSON object (the API judges the rest). */
async function readPattern(args: CreateArgs, io: CommandIo): Promise<Record<string, unknown>> {
  const file = args["pattern-file"];
  const shown =
    args.pattern !== undefined
      ? "--pattern"
      : file === "-"
        ? "the pattern on standard input"
        : file;
  const pattern =
    args.pattern !== undefined
      ? parseJson(args.pattern, "--pattern")
      : file === "-"
        ? parseJson(await readAll(io.stdin), "the pattern on standard input")
        : await readJsonFile(resolve(io.cwd, file ?? ""), file ?? "");
  if (typeof pattern !== "object" || pattern === null || Array.isArray(pattern)) {
    throw new UsageError(`${shown} must be a JSON object: an EventBridge event pattern.`);
  }
  return pattern as Record<string, unknown>;
}

/** The one target option given (the arguments' schema makes sure there is exactly one). */
function targetOf(args: CreateArgs): SubscriptionRequest["target"] {
  if (args.webhook !== undefined) return { kind: "webhook", url: args.webhook };
  if (args["bus-arn"] !== undefined) return { kind: "eventbridge", busArn: args["bus-arn"] };
  return { kind: "sqs", queueUrl: args["queue-url"] as string };
}
