import { runId } from "@toolbus/wire/model";
import { isWebhookSecret, newWebhookSecret } from "@toolbus/wire/webhooks";
import { z } from "zod";
import type { RunEvent } from "../../schemas.js";
import { cursorArg, isoArg, number, option, text } from "../arguments.js";
import { command } from "../command.js";
import { EVENT_HEADERS, eventCells, fixedRow, table } from "../format.js";
import { type ForwardOutcome, forwardEvent } from "../forward.js";

// `toolbus events` (one run's log) and `toolbus listen` (the stage's events as they happen,
// printed and optionally forwarded to a local receiver, so a webhook handler can be built
// against real events before any subscription points at it, as `stripe listen --forward-to`
// does for Stripe's).

/** `--pattern` as the object it must be; the API judges whether it is a valid pattern. */
const patternArg = z.string().transform((value, context): Record<string, unknown> => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    context.addIssue({ code: "custom", message: `not valid JSON: ${(error as Error).message}` });
    return z.NEVER;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    context.addIssue({ code: "custom", message: "must be a JSON object: an event pattern" });
    return z.NEVER;
  }
  return parsed as Record<string, unknown>;
});

const listenSchema = z
  .object({
    pattern: patternArg.optional(),
    since: isoArg.optional(),
    "forward-to": z
      .url({ protocol: /^https?$/, error: "an http(s) URL, e.g. http://localhost:3000/hook" })
      .max(2048)
      .optional(),
    secret: text
      .refine(isWebhookSecret, "must be whsec_ followed by the base64 of 24 to 64 bytes")
      .optional(),
  })
  .refine((v) => v.secret === undefined || v["forward-to"] !== undefined, {
    message: "--secret signs what --forward-to sends: give --forward-to too",
    path: ["secret"],
  });
type ListenArgs = z.output<typeof listenSchema>;

// listen's columns: wide enough for an ISO time, the longest detail type
// (ToolCallApprovalRequested), most tool ids, the longest status and a receiver's answer; the
// run and call ids vary most, so they come last.
const WIDTHS = [24, 25, 20, 9, 9] as const;

export const eventsCommands = {
  events: command({
    usage: "events <runId> [--follow] [--cursor <c>] [--limit <n>]",
    summary: "Print a run's events; --follow keeps printing new ones until Ctrl-C.",
    args: ["runId"],
    options: { follow: option.flag, cursor: option.value, limit: option.value },
    help: [
      "--follow         keep receiving new events (server-sent events; reconnects by itself)",
      "--cursor <c>     start after this cursor",
      "--limit <n>      page size, 1-1000",
      "--json           one JSON event per line (NDJSON)",
    ],
    schema: z.object({
      runId,
      follow: z.boolean().optional(),
      cursor: cursorArg.optional(),
      limit: number("--limit", 1, 1000, true).optional(),
    }),
    async run(args, { client, io, json: asJson }) {
      const stream = client.events(args.runId, {
        ...(args.cursor ? { cursor: args.cursor } : {}),
        ...(args.limit ? { limit: args.limit } : {}),
        ...(args.follow ? { follow: true } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      if (args.follow) {
        if (!asJson) {
          io.stderr.write(`Following run ${args.runId}; Ctrl-C to stop.\n`);
          io.stdout.write(fixedRow(EVENT_HEADERS));
        }
        for await (const event of stream) {
          io.stdout.write(asJson ? `${JSON.stringify(event)}\n` : fixedRow(eventCells(event)));
        }
        return io.signal?.aborted ? 130 : 0;
      }
      // The whole log, so the columns fit the widest cell.
      const rows: string[][] = [];
      for await (const event of stream) {
        if (asJson) io.stdout.write(`${JSON.stringify(event)}\n`);
        else rows.push(eventCells(event));
      }
      if (!asJson) {
        io.stdout.write(
          rows.length > 0 ? table(EVENT_HEADERS, rows) : `No events in run ${args.runId}.\n`,
        );
        if (stream.cursor) {
          io.stderr.write(
            `Read on later: toolbus events ${args.runId} --cursor ${stream.cursor}\n`,
          );
        }
      }
      return io.signal?.aborted ? 130 : 0;
    },
  }),

  listen: command({
    usage:
      "listen [--pattern '<json>'] [--since <iso>] [--forward-to <url>] [--secret <whsec_...>]",
    summary:
      "Print the stage's events as they happen (every run's); --forward-to posts each to a URL, signed.",
    args: [],
    options: {
      pattern: option.value,
      since: option.value,
      "forward-to": option.value,
      secret: option.value,
    },
    help: [
      "--pattern '<json>'     only the events this EventBridge event pattern matches (the same",
      '                       patterns as subscriptions), e.g. \'{"detail":{"status":["failed"]}}\'',
      "--since <iso>          start at the first event recorded at or after this time; default:",
      "                       only events from now on",
      "--forward-to <url>     POST each event to this http(s) URL (a local receiver) with the body",
      "                       and webhook-id a subscription's webhook gets, signed the Standard",
      "                       Webhooks way; the receiver's answer is printed, failures too",
      "--secret <whsec_...>   sign with this secret; default: a new one, printed at the start",
      "--json                 one JSON event per line (NDJSON); forward results as JSON on stderr",
      "Runs until Ctrl-C; reconnects by itself when the server ends the stream.",
    ],
    schema: listenSchema,
    async run(args, { client, io, json: asJson }) {
      const forwardTo = args["forward-to"];
      // Without --secret a session gets its own, shown once below for the receiver to check with.
      const generated = forwardTo !== undefined && args.secret === undefined;
      const secret = args.secret ?? (generated ? newWebhookSecret() : undefined);
      const target =
        forwardTo !== undefined && secret !== undefined ? { url: forwardTo, secret } : undefined;

      const stream = client.stageEvents({
        ...(args.pattern ? { pattern: args.pattern } : {}),
        ...(args.since ? { since: args.since } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      // Opened before "Ready" is printed: whatever happens after it is in the stream.
      const cursor = await stream.open();
      if (asJson) {
        const listening = {
          cursor,
          ...(args.pattern ? { pattern: args.pattern } : {}),
          ...(args.since ? { since: args.since } : {}),
          ...(target ? { forwardTo: target.url } : {}),
          ...(generated ? { secret } : {}),
        };
        io.stderr.write(`${JSON.stringify({ listening })}\n`);
      } else {
        io.stderr.write(readyLines(args, target?.url, generated ? secret : undefined));
        io.stdout.write(fixedRow(listenHeaders(target !== undefined), WIDTHS));
      }

      for await (const { event } of stream) {
        const outcome = target ? await forwardEvent(event, target, io.signal) : undefined;
        if (asJson) {
          io.stdout.write(`${JSON.stringify(event)}\n`);
          if (outcome) {
            io.stderr.write(`${JSON.stringify({ forwarded: forwardedJson(event, outcome) })}\n`);
          }
          continue;
        }
        io.stdout.write(fixedRow(listenRow(event, outcome), WIDTHS));
        if (outcome && !outcome.ok) {
          io.stderr.write(
            `toolbus: forwarding ${event.detailType} of ${runAndCall(event)} (webhook-id ${outcome.webhookId}) to ${target?.url} failed: ${outcome.error}; listening on.\n`,
          );
        }
      }
      return io.signal?.aborted ? 130 : 0;
    },
  }),
};

function readyLines(
  args: ListenArgs,
  forwardTo: string | undefined,
  newSecret: string | undefined,
): string {
  const which = args.pattern ? `events matching ${JSON.stringify(args.pattern)}` : "every event";
  const from = args.since ? `recorded since ${args.since}` : "from now on";
  const lines = [`Ready: listening to ${which} ${from}; Ctrl-C to stop.`];
  if (forwardTo) {
    lines.push(`Forwarding each event to ${forwardTo}, signed the Standard Webhooks way.`);
    lines.push(
      newSecret
        ? `Webhook signing secret for this session (give it to the receiver): ${newSecret}`
        : "Signing with the secret from --secret.",
    );
  }
  return `${lines.join("\n")}\n`;
}

function listenHeaders(forwarding: boolean): string[] {
  return ["TIME", "EVENT", "TOOL", "STATUS", ...(forwarding ? ["FORWARD"] : []), "RUN / CALL"];
}

function listenRow(event: RunEvent, outcome: ForwardOutcome | undefined): string[] {
  const status =
    event.detailType === "ToolResultReceived"
      ? event.detail.status
      : event.detailType === "ToolCallScheduled"
        ? "scheduled"
        : event.detailType === "ToolCallProgress"
          ? "running"
          : "awaiting";
  return [
    event.occurredAt,
    event.detailType,
    event.detail.toolId,
    status,
    ...(outcome ? [outcome.status === undefined ? "no answer" : String(outcome.status)] : []),
    runAndCall(event),
  ];
}

/** As in the event key: `<runId>/<callId>`. */
function runAndCall(event: RunEvent): string {
  return `${event.detail.parentRunId}/${event.detail.callId}`;
}

function forwardedJson(event: RunEvent, outcome: ForwardOutcome) {
  return { eventKey: event.eventKey, ...outcome };
}
