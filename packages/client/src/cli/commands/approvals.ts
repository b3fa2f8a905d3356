import { callId, runId } from "@toolbus/wire/model";
import { z } from "zod";
import type { CallView } from "../../schemas.js";
import { number, option } from "../arguments.js";
import { command } from "../command.js";
import { json, table } from "../format.js";

// `toolbus approvals ...`: the calls waiting for a person, and that person's answer.

const reason = z.string().min(1).max(1000, "at most 1,000 characters").optional();

export const approvalsCommands = {
  "approvals list": command({
    usage: "approvals list [--limit <n>]",
    summary: "Calls waiting for a person's approval, the soonest to expire first.",
    args: [],
    options: { limit: option.value },
    schema: z.object({ limit: number("--limit", 1, 100, true).optional() }),
    async run(args, { client, io, json: asJson }) {
      const waiting = await client.approvals.list(args.limit);
      if (asJson) io.stdout.write(json(waiting));
      else if (waiting.length === 0) io.stdout.write("No call is waiting for approval.\n");
      else io.stdout.write(approvalTable(waiting));
      return 0;
    },
  }),

  "approvals approve": command({
    usage: "approvals approve <runId> <callId> [--reason <text>]",
    summary: "Approve a call that awaits approval: it runs. Final.",
    args: ["runId", "callId"],
    options: { reason: option.value },
    schema: z.object({ runId, callId, reason }),
    async run(args, { client, io, json: asJson }) {
      const call = await client.approvals.approve(args.runId, args.callId, args.reason);
      io.stdout.write(
        asJson
          ? json(call)
          : `Approved ${call.toolId} call ${call.callId} of run ${call.parentRunId}: it runs now (${call.status}).\n`,
      );
      return 0;
    },
  }),

  "approvals deny": command({
    usage: "approvals deny <runId> <callId> [--reason <text>]",
    summary: "Deny a call that awaits approval: it fails as denied, with the reason. Final.",
    args: ["runId", "callId"],
    options: { reason: option.value },
    schema: z.object({ runId, callId, reason }),
    async run(args, { client, io, json: asJson }) {
      const call = await client.approvals.deny(args.runId, args.callId, args.reason);
      io.stdout.write(
        asJson
          ? json(call)
          : `Denied ${call.toolId} call ${call.callId} of run ${call.parentRunId}: it failed as denied.\n`,
      );
      return 0;
    },
  }),
};

/** One row per call awaiting approval: when it expires, what it would run, who asked. */
function approvalTable(calls: readonly CallView[]): string {
  return table(
    ["EXPIRES", "TOOL", "REQUESTED BY", "RUN / CALL"],
    calls.map((call) => [
      // Every call awaiting approval has one; "-" only for a server older than the field
      // (added 2026-11-26). Drop the "-" after 2027-03-31, once no stage runs a server that old.
      call.approval?.expiresAt ?? "-",
      call.toolId,
      `${call.requestedBy.id} (${call.requestedBy.role})`,
      `${call.parentRunId} / ${call.callId}`,
    ]),
  );
}
