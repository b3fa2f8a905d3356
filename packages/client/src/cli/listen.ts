import { newWebhookSecret } from "@toolbus/core/webhooks";
import type { RunEvent } from "../schemas.js";
import type { CommandArgs } from "./args.js";
import type { CommandContext } from "./context.js";
import { fixedRow } from "./format.js";
import { type ForwardOutcome, forwardEvent } from "./forward.js";

// `toolbus listen`: the stage's events as they happen, printed and optionally forwarded to a
// local receiver, so a webhook handler can be built against real events before any
// subscription points at it (as `stripe listen --forward-to` does for Stripe's).

// Wide enough for an ISO time, the longest detail type (ToolCallApprovalRequested), most tool
// ids, the longest status and a receiver's answer; the run and call ids vary most, so they come
// last.
const WIDTHS = [24, 25, 20, 9, 9] as const;

export async function listen(
  args: CommandArgs["listen"],
  { client, io, json: asJson }: CommandContext,
): Promise<number> {
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
    io.stdout.write(fixedRow(headers(target !== undefined), WIDTHS));
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
    io.stdout.write(fixedRow(eventRow(event, outcome), WIDTHS));
    if (outcome && !outcome.ok) {
      io.stderr.write(
        `toolbus: forwarding ${event.detailType} of ${runAndCall(event)} (webhook-id ${outcome.webhookId}) to ${target?.url} failed: ${outcome.error}; listening on.\n`,
      );
    }
  }
  return io.signal?.aborted ? 130 : 0;
}

function readyLines(
  args: CommandArgs["listen"],
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

function headers(forwarding: boolean): string[] {
  return ["TIME", "EVENT", "TOOL", "STATUS", ...(forwarding ? ["FORWARD"] : []), "RUN / CALL"];
}

function eventRow(event: RunEvent, outcome: ForwardOutcome | undefined): string[] {
  const status =
    event.detailType === "ToolResultReceived"
      ? event.detail.status
      : event.detailType === "ToolCallScheduled"
        ? "scheduled"
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
