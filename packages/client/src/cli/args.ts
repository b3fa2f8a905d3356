import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  CATEGORIES,
  callId,
  runId,
  subscriptionId,
  toolId,
  toolsetName,
} from "@toolbus/core/model";
import { isWebhookSecret } from "@toolbus/core/webhooks";
import { z } from "zod";
import type { Harness } from "../generated/catalog-types.js";
import { UsageError } from "./errors.js";

const OPTIONS = {
  endpoint: { type: "string" },
  key: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  category: { type: "string" },
  toolset: { type: "string" },
  mode: { type: "string" },
  available: { type: "boolean" },
  unavailable: { type: "boolean" },
  input: { type: "string" },
  "input-file": { type: "string" },
  run: { type: "string" },
  "call-id": { type: "string" },
  wait: { type: "string" },
  follow: { type: "boolean" },
  cursor: { type: "string" },
  limit: { type: "string" },
  harness: { type: "string" },
  out: { type: "string" },
  name: { type: "string" },
  role: { type: "string" },
  rename: { type: "string", multiple: true },
  pattern: { type: "string" },
  "pattern-file": { type: "string" },
  webhook: { type: "string" },
  "bus-arn": { type: "string" },
  "queue-url": { type: "string" },
  "event-key": { type: "string", multiple: true },
  since: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  "forward-to": { type: "string" },
  reason: { type: "string" },
  secret: { type: "string" },
  "no-toolbus-tools": { type: "boolean" },
  "max-calls": { type: "string" },
  "max-calls-per-tool": { type: "string" },
  "max-seconds": { type: "string" },
  "max-cost": { type: "string" },
  "max-repeats": { type: "string" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

type OptionName = keyof typeof OPTIONS;
const GLOBAL: readonly OptionName[] = ["endpoint", "key", "json", "help", "version"];

// Listed here rather than imported: core's harness module brings its renderers (and their
// YAML library) into the CLI's bundle. The checks below fail to compile when the generated
// Harness type and this list disagree.
const HARNESSES = ["claude-code", "opencode", "copilot"] as const satisfies readonly Harness[];
type Unlisted = Exclude<Harness, (typeof HARNESSES)[number]>;
const everyHarnessListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyHarnessListed;

const HARNESS_CHOICES = [...HARNESSES, "all"] as const;

interface CommandSpec {
  usage: string;
  summary: string;
  args: readonly string[];
  options: readonly OptionName[];
  /** Lines of option help shown by `toolbus <command> --help`. */
  help?: readonly string[];
}

export const COMMANDS = {
  "tools list": {
    usage: "tools list [--category <c>] [--toolset <t>] [--mode <m>] [--available | --unavailable]",
    summary: "List the catalog's tools and whether each is available to you.",
    args: [],
    options: ["category", "toolset", "mode", "available", "unavailable"],
    help: [
      `--category <c>   one of ${CATEGORIES.join(", ")}`,
      "--toolset <t>    only this toolset's tools",
      "--mode <m>       tools offered in this workflow mode (and availability judged in it)",
      "--available      only tools you can call now; --unavailable: only the others, with why",
    ],
  },
  "tools search": {
    usage: "tools search <query> [--limit <n>] [--mode <m>]",
    summary: "Find the tools you can call for a need in words, best first.",
    args: ["query"],
    options: ["limit", "mode"],
    help: [
      '<query>          the need, in quotes: "refund a payment"',
      "--limit <n>      how many, 1-50 (default 5)",
      "--mode <m>       search the tools offered in this workflow mode",
    ],
  },
  "tools show": {
    usage: "tools show <id>",
    summary: "Show one tool: description, guidelines and input schema.",
    args: ["id"],
    options: [],
  },
  "tools enable": {
    usage: "tools enable <id>",
    summary: "Enable a tool on this stage (admin): selection may offer it again.",
    args: ["id"],
    options: [],
  },
  "tools disable": {
    usage: "tools disable <id>",
    summary: "Disable a tool on this stage (admin): no selection offers it (reason: disabled).",
    args: ["id"],
    options: [],
  },
  "toolsets list": {
    usage: "toolsets list",
    summary: "List the toolsets: kind (builtin, http, mcp), owner and description.",
    args: [],
    options: [],
  },
  "toolsets show": {
    usage: "toolsets show <name>",
    summary: "Show one toolset and its tools.",
    args: ["name"],
    options: [],
  },
  "capabilities list": {
    usage: "capabilities list",
    summary: "Show each capability: available or why not, where it was read, when checked.",
    args: [],
    options: [],
  },
  "capabilities refresh": {
    usage: "capabilities refresh",
    summary: "Detect and verify every capability again (admin), then show them.",
    args: [],
    options: [],
  },
  call: {
    usage:
      "call <tool> --run <runId> [--input '<json>' | --input-file <file>] [--call-id <id>] [--mode <m>] [--wait <seconds>]",
    summary: "Call a tool under a run. Exits 1 when the tool failed.",
    args: ["tool"],
    options: ["input", "input-file", "run", "call-id", "mode", "wait"],
    help: [
      "--run <runId>         the run the call belongs to (its events are logged under it)",
      "--input '<json>'      the tool's input as JSON (default {})",
      "--input-file <file>   read the input from a JSON file; - reads standard input",
      "--call-id <id>        your id for the call: the same id and input give the same call",
      "--mode <m>            workflow mode (default: the stage's)",
      "--wait <seconds>      how long to wait for the result, 0-60 (default: the stage's)",
    ],
  },
  stats: {
    usage: "stats",
    summary:
      "Calls by tool since start: outcomes, cache, rate limits, fallbacks, p50 / p99 (admin).",
    args: [],
    options: [],
    help: [
      "Under npm start the server counts every call it ran; on AWS the counters are in",
      "CloudWatch (each tool's function writes its own), and stats says where to look.",
    ],
  },
  "calls show": {
    usage: "calls show <runId> <callId>",
    summary: "Show a call and, once finished, its result.",
    args: ["runId", "callId"],
    options: [],
  },
  events: {
    usage: "events <runId> [--follow] [--cursor <c>] [--limit <n>]",
    summary: "Print a run's events; --follow keeps printing new ones until Ctrl-C.",
    args: ["runId"],
    options: ["follow", "cursor", "limit"],
    help: [
      "--follow         keep receiving new events (server-sent events; reconnects by itself)",
      "--cursor <c>     start after this cursor",
      "--limit <n>      page size, 1-1000",
      "--json           one JSON event per line (NDJSON)",
    ],
  },
  listen: {
    usage:
      "listen [--pattern '<json>'] [--since <iso>] [--forward-to <url>] [--secret <whsec_...>]",
    summary:
      "Print the stage's events as they happen (every run's); --forward-to posts each to a URL, signed.",
    args: [],
    options: ["pattern", "since", "forward-to", "secret"],
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
  },
  "render-agent": {
    usage:
      "render-agent <file> --harness <claude-code|opencode|copilot|all> [--out <dir>] [--no-toolbus-tools]",
    summary:
      "Render an agent file for a harness from a JSON agent definition, with Toolbus's tools.",
    args: ["file"],
    options: ["harness", "out", "no-toolbus-tools"],
    help: [
      "<file>              JSON: an agent { name, description, prompt, tools?, model?, mode?,",
      "                    role?, tags?, disallowedTools? } or a render request { agent,",
      "                    enrichers?, format?, opencodeTools?, opencodeMode?, harness? }",
      "--harness <h>       claude-code, opencode, copilot or all (wins over the file's harness)",
      "--out <dir>         write each file at its harness path under <dir>, and merge Toolbus's",
      "                    MCP server into the project's .mcp.json / opencode.json; default: print",
      "--no-toolbus-tools  leave Toolbus's catalog out. By default the agent gets the catalog's",
      "                    tools it may use (in its mode and role) as tools of Toolbus's MCP",
      "                    server: the addToolbusCatalog enricher, added first unless the file",
      "                    already has one (then its options are kept)",
    ],
  },
  "keys create": {
    usage: "keys create --name <name> --role <role>",
    summary: "Create an API key (admin). The key is shown once.",
    args: [],
    options: ["name", "role"],
  },
  "keys list": {
    usage: "keys list",
    summary: "List API keys (admin); never the keys themselves.",
    args: [],
    options: [],
  },
  "keys revoke": {
    usage: "keys revoke <keyId>",
    summary: "Revoke an API key (admin).",
    args: ["keyId"],
    options: [],
  },
  "toolsets register": {
    usage: "toolsets register <file>",
    summary:
      "Register or replace an http or MCP toolset from a JSON file (admin); prints the diff.",
    args: ["file"],
    options: [],
    help: [
      '<file>           JSON: an http registration { kind: "http", name, description, owner,',
      '                 auth?, tools } or an mcp one { kind: "mcp", name, description, owner,',
      "                 url, auth?, renames?, defaults? }; - reads standard input. The toolset",
      "                 is registered under the file's name (a second run replaces it)",
    ],
  },
  "toolsets refresh": {
    usage: "toolsets refresh <name> [--rename <remote>=<id> ...]",
    summary: "List a registered MCP server's tools again (admin); prints the diff.",
    args: ["name"],
    options: ["rename"],
    help: [
      "--rename <remote>=<id>   the server's tool <remote> gets the id <id> here; repeatable,",
      "                         kept with the registration's renames",
    ],
  },
  "toolsets remove": {
    usage: "toolsets remove <name>",
    summary: "Remove a registered toolset and its tools (admin).",
    args: ["name"],
    options: [],
  },
  "subscriptions create": {
    usage:
      "subscriptions create --name <name> (--pattern '<json>' | --pattern-file <file>) (--webhook <url> | --bus-arn <arn> | --queue-url <url>)",
    summary:
      "Subscribe a webhook, bus or queue to the events a pattern matches; the secret is shown once.",
    args: [],
    options: ["name", "pattern", "pattern-file", "webhook", "bus-arn", "queue-url"],
    help: [
      "--name <name>            what the subscription is for, 1-128 characters",
      "--pattern '<json>'       an EventBridge event pattern over Toolbus's events, e.g.",
      '                         \'{"detail-type":["ToolResultReceived"],"detail":{"status":["failed"]}}\'',
      "--pattern-file <file>    read the pattern from a JSON file; - reads standard input",
      "--webhook <url>          POST each event here, signed the Standard Webhooks way",
      "--bus-arn <arn>          put each event on this EventBridge bus (the stage must allow it)",
      "--queue-url <url>        send each event to this SQS queue (the stage must allow it)",
    ],
  },
  "runs show": {
    usage: "runs show <runId>",
    summary: "A run's limits, what it used and has left, and its calls by status.",
    args: ["runId"],
    options: [],
  },
  "runs policy": {
    usage:
      "runs policy <runId> [--max-calls <n>] [--max-calls-per-tool <n>] [--max-seconds <n>] [--max-cost <n>] [--max-repeats <n>]",
    summary:
      "Set a run's own limits: once, before or at its first call, only tighter than the stage's.",
    args: ["runId"],
    options: ["max-calls", "max-calls-per-tool", "max-seconds", "max-cost", "max-repeats"],
    help: [
      "--max-calls <n>            calls in the run, 1-1000000",
      "--max-calls-per-tool <n>   calls of any one tool in the run, 1-1000000",
      "--max-seconds <n>          seconds from the run's first call, 1-2592000 (30 days)",
      "--max-cost <n>             cost units (each tool's cost, default 1, summed), 1-1000000000",
      "--max-repeats <n>          runs of one tool with one input (the loop breaker), 1-1000",
      "At least one limit. A second, different policy for the run is refused (409), and so is",
      "a limit looser than the stage's (400). toolbus runs show <runId> shows what it used.",
    ],
  },
  "approvals list": {
    usage: "approvals list [--limit <n>]",
    summary: "Calls waiting for a person's approval, the soonest to expire first.",
    args: [],
    options: ["limit"],
  },
  "approvals approve": {
    usage: "approvals approve <runId> <callId> [--reason <text>]",
    summary: "Approve a call that awaits approval: it runs. Final.",
    args: ["runId", "callId"],
    options: ["reason"],
  },
  "approvals deny": {
    usage: "approvals deny <runId> <callId> [--reason <text>]",
    summary: "Deny a call that awaits approval: it fails as denied, with the reason. Final.",
    args: ["runId", "callId"],
    options: ["reason"],
  },
  "subscriptions list": {
    usage: "subscriptions list",
    summary: "List your subscriptions (an admin: all) with status, target and failure streak.",
    args: [],
    options: [],
  },
  "subscriptions show": {
    usage: "subscriptions show <id>",
    summary: "Show a subscription: its pattern, target, status and failure streak.",
    args: ["id"],
    options: [],
  },
  "subscriptions pause": {
    usage: "subscriptions pause <id>",
    summary: "Pause a subscription: events matched meanwhile are not queued.",
    args: ["id"],
    options: [],
  },
  "subscriptions resume": {
    usage: "subscriptions resume <id>",
    summary: "Resume a subscription, with a clean failure streak.",
    args: ["id"],
    options: [],
  },
  "subscriptions delete": {
    usage: "subscriptions delete <id>",
    summary: "Delete a subscription.",
    args: ["id"],
    options: [],
  },
  "subscriptions rotate-secret": {
    usage: "subscriptions rotate-secret <id>",
    summary: "Make a new signing secret, shown once; the old one signs beside it for 24 hours.",
    args: ["id"],
    options: [],
  },
  "subscriptions failures": {
    usage: "subscriptions failures <id> [--limit <n>] [--cursor <c>]",
    summary: "List a subscription's dead letters: deliveries that failed until given up on.",
    args: ["id"],
    options: ["limit", "cursor"],
    help: [
      "--limit <n>      page size, 1-100 (default 50)",
      "--cursor <c>     the next page, as the previous one said",
    ],
  },
  "subscriptions redrive": {
    usage: "subscriptions redrive <id> [--event-key <key> ...]",
    summary: "Send dead letters again, with a fresh retry window (all, or the keys given).",
    args: ["id"],
    options: ["event-key"],
    help: ["--event-key <key>   only this dead letter (see subscriptions failures); repeatable"],
  },
  "subscriptions replay": {
    usage: "subscriptions replay <id> (--run <runId> | --from <iso> [--to <iso>])",
    summary: "Send logged events that the pattern matches again, marked as a replay.",
    args: ["id"],
    options: ["run", "from", "to"],
    help: [
      "--run <runId>    the run whose events go out again (with the next retry run, within a",
      "                 minute; each with replay: true and the webhook-id it had the first time)",
      "--from <iso>     instead, the events the stage recorded from this time ...",
      "--to <iso>       ... to this one (default: now)",
    ],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;
const GROUPS = new Set([
  "tools",
  "toolsets",
  "calls",
  "keys",
  "capabilities",
  "subscriptions",
  "approvals",
  "runs",
]);

/** The commands of a group (`tools` -> `tools list`, `tools show`, ...). */
function groupCommands(group: string): CommandName[] {
  return (Object.keys(COMMANDS) as CommandName[]).filter((name) => name.startsWith(`${group} `));
}

/** `toolbus <group> --help`: the group's commands, each with its usage and summary. */
export function groupHelp(group: string): string {
  const lines = groupCommands(group).map((name) => {
    const spec: CommandSpec = COMMANDS[name];
    return `  toolbus ${spec.usage}\n      ${spec.summary}`;
  });
  return `Usage: toolbus ${group} <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun toolbus ${group} <command> --help for one command's options.\n`;
}

export const HELP = `Usage: toolbus <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((spec) => `  toolbus ${spec.usage}\n      ${spec.summary}`)
  .join("\n")}

Options for every command:
  --version          print the version of toolbus
  --endpoint <url>   the API (default: TOOLBUS_ENDPOINT, then .toolbus/local.json of \`npm start\`)
  --key <key>        the API key (default: TOOLBUS_API_KEY, then .toolbus/admin-key); prefer
                     the environment variable: arguments are visible to other local users
  --json             machine-readable output on stdout (errors as JSON on stderr)
  -h, --help         show help (toolbus <command> --help for one command, toolbus <group>
                     --help, e.g. toolbus tools --help, for a group's)

Exit codes: 0 ok, 1 failure (API error, unreachable endpoint, or the called tool failed),
2 usage error (unknown command or option, invalid value, no endpoint or key).
`;

function commandHelp(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  const lines = [`Usage: toolbus ${spec.usage}`, "", spec.summary];
  if (spec.help?.length) lines.push("", "Options:", ...spec.help.map((line) => `  ${line}`));
  lines.push("", "Also: --endpoint <url>, --key <key>, --json, --help (see toolbus --help).");
  return `${lines.join("\n")}\n`;
}

const text = z.string().trim();
const number = (what: string, min: number, max: number, integer: boolean) =>
  text
    .regex(
      integer ? /^\d+$/ : /^\d+(\.\d+)?$/,
      `${what} must be a ${integer ? "whole " : ""}number`,
    )
    .transform(Number)
    .pipe(z.number().min(min, `${what} is at least ${min}`).max(max, `${what} is at most ${max}`));

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

/** `--pattern` as the object it must be; the API judges whether it is a valid pattern. */
/** A time on the command line: ISO 8601 with an offset, as the API takes it. */
const isoArg = z.iso.datetime({
  offset: true,
  error: "an ISO date-time, e.g. 2026-05-01T09:00:00Z",
});

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
/** The run policy's limits as options, in the order the API lists them. */
export const RUN_LIMIT_OPTIONS = [
  "max-calls",
  "max-calls-per-tool",
  "max-seconds",
  "max-cost",
  "max-repeats",
] as const;

type TargetOption = keyof typeof targets;
const TARGET_OPTIONS = Object.keys(targets) as TargetOption[];

const SCHEMAS = {
  "tools list": z
    .object({
      category: z
        .enum(CATEGORIES, { error: `--category is one of ${CATEGORIES.join(", ")}` })
        .optional(),
      toolset: toolId.optional(),
      mode: z.string().min(1).max(64).optional(),
      available: z.boolean().optional(),
      unavailable: z.boolean().optional(),
    })
    .refine(
      (v) => !(v.available && v.unavailable),
      "--available and --unavailable exclude each other",
    ),
  "tools search": z.object({
    query: z.string().trim().min(1, "<query> is the need, in words").max(500),
    limit: number("--limit", 1, 50, true).optional(),
    mode: z.string().min(1).max(64).optional(),
  }),
  "tools show": z.object({ id: toolId }),
  "tools enable": z.object({ id: toolId }),
  "tools disable": z.object({ id: toolId }),
  "toolsets list": z.object({}),
  "toolsets show": z.object({ name: toolsetName }),
  "capabilities list": z.object({}),
  "capabilities refresh": z.object({}),
  call: z
    .object({
      tool: toolId,
      run: runId.optional(),
      input: z.string().optional(),
      "input-file": z.string().min(1).optional(),
      "call-id": callId.optional(),
      mode: z.string().min(1).max(64).optional(),
      wait: number("--wait", 0, 60, false).optional(),
    })
    .refine((v) => v.run !== undefined, { message: "--run <runId> is required", path: ["run"] })
    .refine((v) => v.input === undefined || v["input-file"] === undefined, {
      message: "give --input or --input-file, not both",
      path: ["input"],
    }),
  stats: z.object({}),
  "calls show": z.object({ runId, callId }),
  events: z.object({
    runId,
    follow: z.boolean().optional(),
    cursor: z.string().min(1).max(2048).optional(),
    limit: number("--limit", 1, 1000, true).optional(),
  }),
  listen: z
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
    }),
  "render-agent": z.object({
    file: z.string().min(1),
    harness: z
      .enum(HARNESS_CHOICES, { error: `--harness is one of ${HARNESS_CHOICES.join(", ")}` })
      .optional(),
    out: z.string().min(1).optional(),
    "no-toolbus-tools": z.boolean().optional(),
  }),
  "keys create": z
    .object({
      name: z.string().min(1).max(120).optional(),
      role: z.string().min(1).max(64).optional(),
    })
    .refine((v) => v.name !== undefined, { message: "--name is required", path: ["name"] })
    .refine((v) => v.role !== undefined, { message: "--role is required", path: ["role"] }),
  "keys list": z.object({}),
  "keys revoke": z.object({
    keyId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "not a key id"),
  }),
  "toolsets register": z.object({ file: z.string().min(1) }),
  "toolsets refresh": z.object({
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
  "toolsets remove": z.object({ name: toolsetName }),
  "subscriptions create": z
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
    }),
  "subscriptions list": z.object({}),
  "subscriptions show": z.object({ id: subscriptionIdArg }),
  "subscriptions pause": z.object({ id: subscriptionIdArg }),
  "subscriptions resume": z.object({ id: subscriptionIdArg }),
  "subscriptions delete": z.object({ id: subscriptionIdArg }),
  "subscriptions rotate-secret": z.object({ id: subscriptionIdArg }),
  "subscriptions failures": z.object({
    id: subscriptionIdArg,
    limit: number("--limit", 1, 100, true).optional(),
    cursor: z.string().min(1).max(2048).optional(),
  }),
  "subscriptions redrive": z.object({
    id: subscriptionIdArg,
    "event-key": z
      .array(z.string().min(1).max(512, "an event key is at most 512 characters"))
      .max(100, "at most 100 event keys at once")
      .optional(),
  }),
  "runs show": z.object({ runId }),
  "runs policy": z
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
  "approvals list": z.object({ limit: number("--limit", 1, 100, true).optional() }),
  "approvals approve": z.object({
    runId,
    callId,
    reason: z.string().min(1).max(1000, "at most 1,000 characters").optional(),
  }),
  "approvals deny": z.object({
    runId,
    callId,
    reason: z.string().min(1).max(1000, "at most 1,000 characters").optional(),
  }),
  "subscriptions replay": z
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
} satisfies Record<CommandName, z.ZodType>;

export type CommandArgs = { [N in CommandName]: z.output<(typeof SCHEMAS)[N]> };

export interface Globals {
  endpoint?: string;
  key?: string;
  json: boolean;
}

export type ParsedCommand =
  | { kind: "help"; text: string }
  | { kind: "version" }
  | {
      [N in CommandName]: { kind: "run"; name: N; args: CommandArgs[N]; globals: Globals };
    }[CommandName];

/** Parses and validates the command line; anything wrong is a UsageError. */
export function parseCommandLine(argv: readonly string[]): ParsedCommand {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error), { cause: error });
  }
  const { values, positionals } = parsed;
  const [first, second] = positionals;
  if (first === undefined || first === "help") {
    if (values.help || first === "help") return { kind: "help", text: HELP };
    if (values.version) return { kind: "version" };
    throw new UsageError("No command given.", { hint: "Run toolbus --help for the commands." });
  }
  if (GROUPS.has(first) && second === undefined) {
    if (values.help) return { kind: "help", text: groupHelp(first) };
    throw new UsageError(`toolbus ${first} needs a command.`, {
      hint: `Try: ${groupCommands(first)
        .map((command) => `toolbus ${command}`)
        .join(", ")}; toolbus ${first} --help says more.`,
    });
  }
  const name = (GROUPS.has(first) ? `${first} ${second ?? ""}`.trim() : first) as CommandName;
  if (!(name in COMMANDS)) {
    const known = GROUPS.has(first) ? groupCommands(first) : [];
    throw new UsageError(`Unknown command: ${name}.`, {
      hint: known.length
        ? `Try: ${known.map((command) => `toolbus ${command}`).join(", ")}.`
        : "Run toolbus --help for the commands.",
    });
  }
  if (values.help) return { kind: "help", text: commandHelp(name) };

  const spec: CommandSpec = COMMANDS[name];
  const given = positionals.slice(GROUPS.has(first) ? 2 : 1);
  if (given.length > spec.args.length) {
    throw new UsageError(`Unexpected argument: ${given[spec.args.length]}.`, {
      hint: `Usage: toolbus ${spec.usage}`,
    });
  }
  const missing = spec.args.slice(given.length);
  if (missing.length > 0) {
    throw new UsageError(`Missing <${missing.join("> <")}>.`, {
      hint: `Usage: toolbus ${spec.usage}`,
    });
  }
  const allowed = new Set<string>([...GLOBAL, ...spec.options]);
  const foreign = Object.keys(values).filter((option) => !allowed.has(option));
  if (foreign.length > 0) {
    throw new UsageError(
      `${foreign.map((option) => `--${option}`).join(", ")} ${foreign.length > 1 ? "are not options" : "is not an option"} of toolbus ${name}.`,
      { hint: `Usage: toolbus ${spec.usage}` },
    );
  }

  const input: Record<string, unknown> = {};
  for (const option of spec.options) input[option] = values[option];
  for (const [index, arg] of spec.args.entries()) input[arg] = given[index];
  const result = SCHEMAS[name].safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? "");
      const label = spec.args.includes(field) ? `<${field}>` : field ? `--${field}` : "";
      return label && !issue.message.startsWith("--")
        ? `${label}: ${issue.message}`
        : issue.message;
    });
    throw new UsageError(problems.join("; "), { hint: `Usage: toolbus ${spec.usage}` });
  }
  const globals: Globals = {
    json: values.json ?? false,
    ...(values.endpoint !== undefined ? { endpoint: values.endpoint } : {}),
    ...(values.key !== undefined ? { key: values.key } : {}),
  };
  return { kind: "run", name, args: result.data, globals } as ParsedCommand;
}

function parseArgsMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // node adds advice for script authors ("To specify a positional argument ..."): not for us.
  const useful = message
    .split("\n")
    .map((line) => line.split(/\.?\s*To specify /)[0]?.trim() ?? "")
    .filter(Boolean)
    .map((line) => line.replace(/([^.?!])$/, "$1."));
  return useful.join(" ") || message;
}
