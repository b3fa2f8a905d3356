import { resolve } from "node:path";
import { toolId, toolsetName } from "@toolbus/wire/model";
import { z } from "zod";
import type { ToolsetRegistration } from "../../registration.js";
import type {
  HeldSummary,
  HeldToolChange,
  RegistrationOutcome,
  ReviewDecision,
  ToolsetReview,
} from "../../schemas.js";
import { number, option, text } from "../arguments.js";
import { command } from "../command.js";
import type { CommandContext, CommandIo } from "../context.js";
import { UsageError } from "../errors.js";
import { diffTable, fields, json, list, table } from "../format.js";
import { parseJson, readAll, readJsonFile } from "../input.js";

// `toolbus toolsets ...`: the catalog's toolsets, and (admin) registering, refreshing and
// removing the http and MCP ones, and reviewing the changes an MCP server made to its tools.

/**
 * `--rename <remote>=<id>`: split at the last `=`, since an id (snake_case) has none and a
 * remote MCP tool's name might.
 */
const rename = text
  .regex(/^.+=.+$/, "give <remote>=<id>, e.g. search=weather_search")
  .transform((pair) => {
    const at = pair.lastIndexOf("=");
    return [pair.slice(0, at), pair.slice(at + 1)] as const;
  })
  .pipe(z.tuple([z.string().min(1).max(128, "a remote name is at most 128 characters"), toolId]));

/** `--tools a,b`: the ids of the held changes to decide, as `toolsets review` shows them. */
const toolIds = z
  .string()
  .transform((value) =>
    value
      .split(",")
      .map((id) => id.trim())
      .filter((id) => id.length > 0),
  )
  .pipe(z.array(toolId).min(1, "--tools lists at least one tool id, e.g. alerts,radar"));

/** The options and schema `toolsets accept` and `toolsets reject` share. */
const decision = {
  args: ["name"],
  options: { tools: option.value, revision: option.value },
  help: [
    "--tools <a,b>      only the changes of these tools (ids, as toolsets review shows them);",
    "                   without it, every pending change",
    "--revision <n>     the toolset revision toolsets review showed: refused (409) if a refresh",
    "                   has changed it since, so nothing is decided unseen",
  ],
  schema: z.object({
    name: toolsetName,
    tools: toolIds.optional(),
    revision: number("--revision", 1, Number.MAX_SAFE_INTEGER, true).optional(),
  }),
} as const;

export const toolsetsCommands = {
  "toolsets list": command({
    usage: "toolsets list",
    summary: "List the toolsets: kind (builtin, http, mcp), owner and description.",
    args: [],
    options: {},
    schema: z.object({}),
    async run(_args, { client, io, json: asJson }) {
      const toolsets = await client.toolsets.list();
      if (asJson) io.stdout.write(json(toolsets));
      else if (toolsets.length === 0) io.stdout.write("No toolsets.\n");
      else {
        io.stdout.write(
          table(
            ["NAME", "KIND", "OWNER", "DESCRIPTION"],
            toolsets.map((toolset) => [
              toolset.name,
              toolset.kind,
              toolset.owner,
              toolset.description,
            ]),
          ),
        );
      }
      return 0;
    },
  }),

  "toolsets show": command({
    usage: "toolsets show <name>",
    summary: "Show one toolset and its tools.",
    args: ["name"],
    options: {},
    schema: z.object({ name: toolsetName }),
    async run(args, { client, io, json: asJson }) {
      const toolset = await client.toolsets.get(args.name);
      if (asJson) {
        io.stdout.write(json(toolset));
        return 0;
      }
      const head = fields([
        ["Toolset", toolset.name],
        ["Kind", toolset.kind],
        ["Owner", toolset.owner],
        ["Revision", String(toolset.revision)],
      ]);
      const tools =
        toolset.tools.length === 0
          ? "No tools.\n"
          : table(
              ["ID", "CATEGORY", "ENABLED", "TITLE"],
              toolset.tools.map((tool) => [
                tool.id,
                tool.category,
                tool.availability.enabled ? "yes" : "no",
                tool.title,
              ]),
            );
      io.stdout.write(`${head}\n${toolset.description}\n\n${tools}`);
      return 0;
    },
  }),

  "toolsets register": command({
    usage: "toolsets register <file>",
    summary:
      "Register or replace an http or MCP toolset from a JSON file (admin); prints the diff.",
    args: ["file"],
    options: {},
    help: [
      '<file>           JSON: an http registration { kind: "http", name, description, owner,',
      '                 auth?, tools } or an mcp one { kind: "mcp", name, description, owner,',
      "                 url, auth?, renames?, defaults? }; - reads standard input. The toolset",
      "                 is registered under the file's name (a second run replaces it)",
    ],
    schema: z.object({ file: z.string().min(1) }),
    async run(args, { client, io, json: asJson }) {
      const registration = await readRegistration(args.file, io);
      const outcome = await client.toolsets.register(registration);
      io.stdout.write(
        asJson
          ? json(outcome)
          : outcomeSummary(outcome.created ? "Registered" : "Replaced", outcome),
      );
      return 0;
    },
  }),

  "toolsets refresh": command({
    usage: "toolsets refresh <name> [--rename <remote>=<id> ...]",
    summary: "List a registered MCP server's tools again (admin); prints the diff.",
    args: ["name"],
    options: { rename: option.repeated },
    help: [
      "--rename <remote>=<id>   the server's tool <remote> gets the id <id> here; repeatable,",
      "                         kept with the registration's renames",
    ],
    schema: z.object({
      name: toolsetName,
      rename: z
        .array(rename)
        .optional()
        .transform((pairs, context) => {
          if (pairs === undefined) return undefined;
          const renames: Record<string, string> = {};
          for (const [remote, id] of pairs) {
            // Two ids for one remote tool: which one was meant cannot be guessed.
            if (remote in renames) {
              context.addIssue({ code: "custom", message: `names ${remote} twice` });
              return z.NEVER;
            }
            renames[remote] = id;
          }
          return renames;
        }),
    }),
    async run(args, { client, io, json: asJson }) {
      const outcome = await client.toolsets.refresh(
        args.name,
        args.rename ? { renames: args.rename } : {},
      );
      io.stdout.write(asJson ? json(outcome) : outcomeSummary("Refreshed", outcome));
      return 0;
    },
  }),

  "toolsets review": command({
    usage: "toolsets review <name>",
    summary:
      "Show the changes a registered MCP server made that wait for review, field by field (admin).",
    args: ["name"],
    options: {},
    schema: z.object({ name: toolsetName }),
    async run(args, { client, io, json: asJson }) {
      const review = await client.toolsets.review(args.name);
      io.stdout.write(asJson ? json(review) : reviewText(review));
      return 0;
    },
  }),

  "toolsets accept": command({
    usage: "toolsets accept <name> [--tools <a,b>] [--revision <n>]",
    summary: "Serve held changes of a registered MCP server from now on (admin).",
    ...decision,
    run: (args, context) => decide(args, "accept", context),
  }),

  "toolsets reject": command({
    usage: "toolsets reject <name> [--tools <a,b>] [--revision <n>]",
    summary:
      "Reject held changes of a registered MCP server: its pinned definitions stay served (admin).",
    ...decision,
    run: (args, context) => decide(args, "reject", context),
  }),

  "toolsets remove": command({
    usage: "toolsets remove <name>",
    summary: "Remove a registered toolset and its tools (admin).",
    args: ["name"],
    options: {},
    schema: z.object({ name: toolsetName }),
    async run(args, { client, io, json: asJson }) {
      const { removed } = await client.toolsets.remove(args.name);
      io.stdout.write(
        asJson
          ? json({ removed })
          : `Removed toolset ${args.name} and its ${removed.length} tool${removed.length === 1 ? "" : "s"}: ${list(removed)}.\n`,
      );
      return 0;
    },
  }),
};

/**
 * The toolset in one line, then what changed, then what waits for review: what an
 * administrator checks after a write.
 */
function outcomeSummary(verb: string, { toolset, tools, diff, held }: RegistrationOutcome): string {
  const count = `${tools.length} tool${tools.length === 1 ? "" : "s"}`;
  const head = `${verb} toolset ${toolset.name} (${toolset.kind}, owner ${toolset.owner}, revision ${toolset.revision}): ${count}.`;
  return `${head}\n\n${diffTable(diff)}${heldNotice(toolset.name, held)}`;
}

/**
 * Held changes are not in the diff (the pins are still served), so they are named apart, with
 * the command that shows them: otherwise a refresh that found changes reads as one that did not.
 */
function heldNotice(name: string, held: HeldSummary): string {
  const kinds = (["changed", "added", "removed"] as const).filter((kind) => held[kind].length > 0);
  const total = kinds.reduce((sum, kind) => sum + held[kind].length, 0);
  if (total === 0) return "";
  const which = kinds.map((kind) => `${kind} ${list(held[kind])}`).join("; ");
  return `\n${plural(total, "change")} held for review (${which}): toolbus toolsets review ${name}\n`;
}

/** A review as text: the pending changes, then the rejected ones, each field by field. */
function reviewText(review: ToolsetReview): string {
  const head = `Toolset ${review.toolset} (updates: ${review.updates}, revision ${review.revision}): ${review.pending.length} pending, ${review.rejected.length} rejected.\n`;
  const parts = [head];
  if (review.pending.length > 0) {
    parts.push(`\nPending:\n${review.pending.map(changeText).join("")}`);
    parts.push(
      `\nDecide: toolbus toolsets accept|reject ${review.toolset} --revision ${review.revision} [--tools <a,b>]\n`,
    );
  }
  if (review.rejected.length > 0) {
    parts.push(`\nRejected:\n${review.rejected.map(changeText).join("")}`);
  }
  return parts.join("");
}

/** Wide enough for every kind of change (`changed`, `removed`), so the ids line up. */
const KIND_WIDTH = 7;

/** One held change: a header line, then one line per field from the pin to the server's. */
function changeText(change: HeldToolChange): string {
  const when =
    change.state === "pending"
      ? `held since ${change.detectedAt}`
      : `found ${change.detectedAt}, rejected`;
  const head = `${change.change.padEnd(KIND_WIDTH)}  ${change.id}  (server: ${JSON.stringify(change.remoteName)}, ${when})\n`;
  const lines = change.fields.map(
    (field) => `  ${field.path || "/"}: ${shown(field, "before")} → ${shown(field, "after")}\n`,
  );
  if (change.truncated) lines.push("  … more fields differ than are listed\n");
  return head + lines.join("");
}

/** Longest value shown on a field's line: a schema can be long, and --json has it whole. */
const MAX_VALUE_CHARS = 120;

/** One side of a field change as JSON, shortened; an absent side (added, removed) as such. */
function shown(field: HeldToolChange["fields"][number], side: "before" | "after"): string {
  if (!(side in field)) return "(absent)";
  const value = JSON.stringify(field[side]) ?? "undefined";
  return value.length > MAX_VALUE_CHARS ? `${value.slice(0, MAX_VALUE_CHARS - 1)}…` : value;
}

/** `toolsets accept` and `toolsets reject`: decide, then say what was decided and what waits. */
async function decide(
  args: z.output<typeof decision.schema>,
  verdict: "accept" | "reject",
  { client, io, json: asJson }: CommandContext,
): Promise<number> {
  const options = {
    ...(args.tools ? { tools: args.tools } : {}),
    ...(args.revision !== undefined ? { ifMatch: args.revision } : {}),
  };
  const outcome =
    verdict === "accept"
      ? await client.toolsets.accept(args.name, options)
      : await client.toolsets.reject(args.name, options);
  io.stdout.write(asJson ? json(outcome) : decisionText(verdict, outcome));
  return 0;
}

function decisionText(verdict: "accept" | "reject", { decided, review }: ReviewDecision): string {
  const left = `${review.pending.length} still pending (revision ${review.revision}).\n`;
  if (decided.length === 0)
    return `No pending change of toolset ${review.toolset} was ${verdict}ed; ${left}`;
  const done = verdict === "accept" ? "Accepted" : "Rejected";
  return `${done} ${plural(decided.length, "change")} of toolset ${review.toolset}: ${list(decided)}. ${left}`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * The registration file as JSON. Only what the request needs is checked here (an object with
 * a name, which is the path's): every other field is the API's to judge, with its own message.
 */
async function readRegistration(file: string, io: CommandIo): Promise<ToolsetRegistration> {
  const shown = file === "-" ? "the registration on standard input" : file;
  const registration =
    file === "-"
      ? parseJson(await readAll(io.stdin), shown)
      : await readJsonFile(resolve(io.cwd, file), file);
  if (typeof registration !== "object" || registration === null || Array.isArray(registration)) {
    throw new UsageError(`${shown} must hold a JSON object: an http or mcp registration.`);
  }
  const { name } = registration as { name?: unknown };
  if (typeof name !== "string" || name === "") {
    throw new UsageError(`${shown} has no "name": the toolset's name comes from the file.`);
  }
  return registration as ToolsetRegistration;
}
