import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { RenderAgentRequest } from "../client.js";
import { ToolbusClientError } from "../errors.js";
import type { ToolsetRegistration } from "../registration.js";
import type {
  CapabilityStatus,
  RegistrationOutcome,
  RenderedAgentFile,
  RunPolicy,
  SubscriptionRequest,
} from "../schemas.js";
import { approvalTable } from "./approvals.js";
import { type CommandArgs, type CommandName, RUN_LIMIT_OPTIONS } from "./args.js";
import type { CommandContext, CommandIo } from "./context.js";
import { UsageError, withHint } from "./errors.js";
import {
  callSummary,
  diffTable,
  EVENT_HEADERS,
  eventCells,
  fields,
  fixedRow,
  indent,
  json,
  list,
  table,
} from "./format.js";
import { listen } from "./listen.js";
import { statsReport } from "./stats.js";
import {
  failuresTable,
  subscriptionFields,
  subscriptionStatus,
  subscriptionTable,
  withSecret,
} from "./subscriptions.js";

type Handler<N extends CommandName> = (
  args: CommandArgs[N],
  context: CommandContext,
) => Promise<number>;

/** Every command; each returns its exit code (0 ok, 1 failure). */
export const HANDLERS: { [N in CommandName]: Handler<N> } = {
  async "tools list"(args, { client, io, json: asJson }) {
    const tools = await client.tools.list({
      ...(args.category ? { category: args.category } : {}),
      ...(args.toolset ? { toolset: args.toolset } : {}),
      ...(args.mode ? { mode: args.mode } : {}),
      ...(args.available ? { available: true } : args.unavailable ? { available: false } : {}),
    });
    if (asJson) io.stdout.write(json(tools));
    else if (tools.length === 0) io.stdout.write("No tools match.\n");
    else {
      io.stdout.write(
        table(
          ["ID", "TOOLSET", "CATEGORY", "AVAILABLE", "TITLE"],
          tools.map((tool) => [
            tool.id,
            tool.toolset,
            tool.category,
            tool.available ? "yes" : `no (${list(tool.reasons)})`,
            tool.title,
          ]),
        ),
      );
    }
    return 0;
  },

  async "tools search"(args, { client, io, json: asJson }) {
    const found = await client.tools.search(args.query, {
      ...(args.limit ? { limit: args.limit } : {}),
      ...(args.mode ? { mode: args.mode } : {}),
    });
    if (asJson) io.stdout.write(json(found));
    else if (found.tools.length === 0) io.stdout.write("No tool you can call matches.\n");
    else {
      io.stdout.write(
        table(
          ["ID", "SCORE", "TITLE", "MATCHED"],
          found.tools.map((tool) => [
            tool.id,
            tool.score.toFixed(2),
            tool.title,
            list(tool.matched),
          ]),
        ),
      );
    }
    return 0;
  },

  async "tools show"(args, { client, io, json: asJson }) {
    const tool = await client.tools.get(args.id);
    if (asJson) {
      io.stdout.write(json(tool));
      return 0;
    }
    const annotations = [
      tool.annotations.readOnly ? "read-only" : "writes",
      tool.annotations.openWorld ? "open-world" : "closed-world",
      tool.annotations.idempotent ? "idempotent" : "not idempotent",
    ];
    const parts = [
      fields([
        ["Tool", `${tool.id} - ${tool.title}`],
        ["Toolset", tool.toolset],
        ["Category", `${tool.category} (${tool.optionality})`],
        ["Enabled", tool.availability.enabled ? "yes" : "no"],
        ["Modes", tool.availability.modes ? list(tool.availability.modes) : "all"],
        ["Min role", tool.availability.minRole],
        ["Requires", list(tool.requires)],
        ["Produces", list(tool.produces)],
        ["Fallback", tool.fallback],
        ["Behaviour", annotations.join(", ")],
        ["Timeout", `${tool.timeoutMs} ms`],
        ["Version", `${tool.version} (revision ${tool.revision})`],
      ]),
      `\n${tool.description}\n`,
      `\nWhen to use: ${tool.usageHint}\n`,
    ];
    if (tool.guidelines.do.length > 0) {
      parts.push(`\nDo:\n${tool.guidelines.do.map((line) => `  - ${line}\n`).join("")}`);
    }
    if (tool.guidelines.dont.length > 0) {
      parts.push(`\nDon't:\n${tool.guidelines.dont.map((line) => `  - ${line}\n`).join("")}`);
    }
    parts.push(`\nInput schema:\n${indent(json(tool.inputSchema))}`);
    if (tool.examples.length > 0) {
      parts.push(
        `\nExamples:\n${tool.examples.map((example) => `  ${example.title}: ${JSON.stringify(example.input)}\n`).join("")}`,
      );
    }
    io.stdout.write(parts.join(""));
    return 0;
  },

  "tools enable": (args, context) => setEnabled(args.id, true, context),
  "tools disable": (args, context) => setEnabled(args.id, false, context),

  async "toolsets list"(_args, { client, io, json: asJson }) {
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

  async "toolsets show"(args, { client, io, json: asJson }) {
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

  "capabilities list": async (_args, context) =>
    showCapabilities(await context.client.capabilities.list(), context),
  "capabilities refresh": async (_args, context) =>
    showCapabilities(await context.client.capabilities.refresh(), context),

  async call(args, { client, io, json: asJson }) {
    const input = await readInput(args, io);
    const call = await client.call(args.tool, input, {
      runId: args.run as string,
      ...(args["call-id"] ? { callId: args["call-id"] } : {}),
      ...(args.mode ? { mode: args.mode } : {}),
      ...(args.wait !== undefined ? { wait: args.wait } : {}),
      ...(io.signal ? { signal: io.signal } : {}),
    });
    io.stdout.write(asJson ? json(call) : callSummary(call));
    if (call.status !== "failed") return 0;
    const { failure } = call.result;
    if (asJson) {
      io.stderr.write(
        `${JSON.stringify({ error: { code: "tool_failed", message: failure.message, details: failure } })}\n`,
      );
    } else {
      io.stderr.write(`toolbus: ${call.toolId} failed: ${failure.kind}: ${failure.message}\n`);
    }
    return 1;
  },

  async stats(_args, { client, io, json: asJson }) {
    const metrics = await client.metrics();
    io.stdout.write(asJson ? json(metrics) : statsReport(metrics));
    return 0;
  },

  async "calls show"(args, { client, io, json: asJson }) {
    const call = await client.getCall(args.runId, args.callId);
    io.stdout.write(asJson ? json(call) : callSummary(call));
    return 0;
  },

  async events(args, { client, io, json: asJson }) {
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
        io.stderr.write(`Read on later: toolbus events ${args.runId} --cursor ${stream.cursor}\n`);
      }
    }
    return io.signal?.aborted ? 130 : 0;
  },

  listen,

  async "render-agent"(args, { client, io, json: asJson }) {
    const file = resolve(io.cwd, args.file);
    const definition = await readJsonFile(file, args.file);
    if (typeof definition !== "object" || definition === null || Array.isArray(definition)) {
      throw new UsageError(`${args.file} must hold a JSON object: an agent or a render request.`);
    }
    const body: Record<string, unknown> =
      "agent" in definition ? { ...definition } : { agent: definition };
    const harness = args.harness ?? body.harness;
    if (harness === undefined) {
      throw new UsageError("--harness is required (claude-code, opencode, copilot or all).");
    }
    const enrichers = withToolbusCatalog(body.enrichers, !args["no-toolbus-tools"]);
    const result = await client
      .renderAgent({ ...body, harness, ...(enrichers ? { enrichers } : {}) } as RenderAgentRequest)
      .catch((error: unknown) => {
        // The catalog is selected for the agent's mode and role: one this key may not select
        // for is refused, where the file alone would have rendered.
        const addedHere = !args["no-toolbus-tools"] && !hasToolbusCatalog(body.enrichers);
        if (addedHere && isSelectionRefusal(error)) {
          throw withHint(
            error,
            "Toolbus's catalog is added for the agent's mode and role by default; --no-toolbus-tools renders the agent without it.",
          );
        }
        throw error;
      });
    const files: RenderedAgentFile[] = "files" in result ? result.files : [result];
    if (!asJson) {
      for (const rendered of files) {
        for (const warning of rendered.warnings) {
          io.stderr.write(`warning (${rendered.harness}): ${warning}\n`);
        }
      }
    }
    if (args.out) {
      const root = resolve(io.cwd, args.out);
      const written: string[] = [];
      const inside = (path: string) => {
        const target = resolve(root, path);
        const within = relative(root, target);
        // The server names the path; it still may not write outside the chosen folder.
        if (within.startsWith("..") || isAbsolute(within)) {
          throw new UsageError(`Refusing to write ${path} outside ${args.out}.`);
        }
        return target;
      };
      for (const rendered of files) {
        const target = inside(rendered.path);
        await mkdir(dirname(target), { recursive: true });
        await writeFile(target, rendered.content);
        written.push(target);
      }
      // A harness that reads servers from a project file gets them merged into it, next to
      // the servers already there.
      for (const rendered of files) {
        const servers = rendered.mcpServersFile;
        if (!servers) continue;
        const target = inside(servers.path);
        await writeFile(target, await mergedServersFile(target, servers));
        written.push(target);
      }
      io.stdout.write(
        asJson
          ? json({
              files: files.map((rendered, index) => ({ ...rendered, writtenTo: written[index] })),
              mcpServersFiles: written.slice(files.length),
            })
          : written.map((target) => `Wrote ${shownPath(io.cwd, target)}\n`).join(""),
      );
      return 0;
    }
    if (!asJson) {
      // The agent file names Toolbus's server; where the harness keeps servers in a project
      // file, that file is not printed: say where it goes.
      for (const { harness: name, mcpServersFile: servers } of files) {
        if (!servers) continue;
        io.stderr.write(
          `note (${name}): the MCP servers it uses go in ${servers.path} (under "${servers.key}"); --out <dir> merges them there, --json shows them.\n`,
        );
      }
    }
    if (asJson) io.stdout.write(json(result));
    else if (files.length === 1) io.stdout.write(files[0]?.content ?? "");
    else {
      io.stdout.write(
        files.map((rendered) => `==> ${rendered.path} <==\n${rendered.content}`).join("\n"),
      );
    }
    return 0;
  },

  async "keys create"(args, { client, io, json: asJson }) {
    const created = await client.keys.create({
      name: args.name as string,
      role: args.role as string,
    });
    if (asJson) io.stdout.write(json(created));
    else {
      io.stdout.write(
        `${fields([
          ["Key", created.key],
          ["Key id", created.keyId],
          ["Name", created.name],
          ["Role", created.role],
          ["Created", created.createdAt],
        ])}\nKeep the key now: it is shown only once.\n`,
      );
    }
    return 0;
  },

  async "keys list"(_args, { client, io, json: asJson }) {
    const keys = await client.keys.list();
    if (asJson) io.stdout.write(json(keys));
    else if (keys.length === 0) io.stdout.write("No API keys yet: toolbus keys create.\n");
    else {
      io.stdout.write(
        table(
          ["KEY ID", "NAME", "ROLE", "CREATED", "LAST USED", "STATUS"],
          keys.map((key) => [
            key.keyId,
            key.name,
            key.role,
            key.createdAt,
            key.lastUsedAt ?? "-",
            key.revokedAt ? `revoked ${key.revokedAt}` : "active",
          ]),
        ),
      );
    }
    return 0;
  },

  async "keys revoke"(args, { client, io, json: asJson }) {
    const revoked = await client.keys.revoke(args.keyId);
    io.stdout.write(
      asJson
        ? json(revoked)
        : `Revoked key ${revoked.keyId} (${revoked.name}, ${revoked.role}) at ${revoked.revokedAt ?? "now"}.\n`,
    );
    return 0;
  },

  async "toolsets register"(args, { client, io, json: asJson }) {
    const registration = await readRegistration(args.file, io);
    const outcome = await client.toolsets.register(registration);
    io.stdout.write(
      asJson ? json(outcome) : outcomeSummary(outcome.created ? "Registered" : "Replaced", outcome),
    );
    return 0;
  },

  async "toolsets refresh"(args, { client, io, json: asJson }) {
    const outcome = await client.toolsets.refresh(
      args.name,
      args.rename ? { renames: args.rename } : {},
    );
    io.stdout.write(asJson ? json(outcome) : outcomeSummary("Refreshed", outcome));
    return 0;
  },

  async "toolsets remove"(args, { client, io, json: asJson }) {
    const { removed } = await client.toolsets.remove(args.name);
    io.stdout.write(
      asJson
        ? json({ removed })
        : `Removed toolset ${args.name} and its ${removed.length} tool${removed.length === 1 ? "" : "s"}: ${list(removed)}.\n`,
    );
    return 0;
  },

  async "subscriptions create"(args, { client, io, json: asJson }) {
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

  async "runs show"(args, { client, io, json: asJson }) {
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

  async "runs policy"(args, { client, io, json: asJson }) {
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

  async "approvals list"(args, { client, io, json: asJson }) {
    const waiting = await client.approvals.list(args.limit);
    if (asJson) io.stdout.write(json(waiting));
    else if (waiting.length === 0) io.stdout.write("No call is waiting for approval.\n");
    else io.stdout.write(approvalTable(waiting));
    return 0;
  },

  async "approvals approve"(args, { client, io, json: asJson }) {
    const call = await client.approvals.approve(args.runId, args.callId, args.reason);
    io.stdout.write(
      asJson
        ? json(call)
        : `Approved ${call.toolId} call ${call.callId} of run ${call.parentRunId}: it runs now (${call.status}).\n`,
    );
    return 0;
  },

  async "approvals deny"(args, { client, io, json: asJson }) {
    const call = await client.approvals.deny(args.runId, args.callId, args.reason);
    io.stdout.write(
      asJson
        ? json(call)
        : `Denied ${call.toolId} call ${call.callId} of run ${call.parentRunId}: it failed as denied.\n`,
    );
    return 0;
  },

  async "subscriptions list"(_args, { client, io, json: asJson }) {
    const subscriptions = await client.subscriptions.list();
    if (asJson) io.stdout.write(json(subscriptions));
    else if (subscriptions.length === 0) {
      io.stdout.write("No subscriptions yet: toolbus subscriptions create.\n");
    } else io.stdout.write(subscriptionTable(subscriptions));
    return 0;
  },

  async "subscriptions show"(args, { client, io, json: asJson }) {
    const subscription = await client.subscriptions.get(args.id);
    io.stdout.write(asJson ? json(subscription) : subscriptionFields(subscription));
    return 0;
  },

  async "subscriptions pause"(args, { client, io, json: asJson }) {
    const paused = await client.subscriptions.pause(args.id);
    io.stdout.write(
      asJson
        ? json(paused)
        : `Paused subscription ${paused.id} (${paused.name}): events matched meanwhile are not queued.\n`,
    );
    return 0;
  },

  async "subscriptions resume"(args, { client, io, json: asJson }) {
    const resumed = await client.subscriptions.resume(args.id);
    io.stdout.write(
      asJson
        ? json(resumed)
        : `Resumed subscription ${resumed.id} (${resumed.name}): ${subscriptionStatus(resumed)}, failure streak ${resumed.failureStreak}.\n`,
    );
    return 0;
  },

  async "subscriptions delete"(args, { client, io, json: asJson }) {
    await client.subscriptions.remove(args.id);
    // The API answers 204 with no body: --json says what was deleted.
    io.stdout.write(asJson ? json({ deleted: args.id }) : `Deleted subscription ${args.id}.\n`);
    return 0;
  },

  async "subscriptions rotate-secret"(args, { client, io, json: asJson }) {
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

  async "subscriptions failures"(args, { client, io, json: asJson }) {
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

  async "subscriptions redrive"(args, { client, io, json: asJson }) {
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

  async "subscriptions replay"(args, { client, io, json: asJson }) {
    const window = args.from ? { from: args.from, ...(args.to ? { to: args.to } : {}) } : undefined;
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
};

/** `name value` pairs of the numbers set, e.g. `maxCalls 10, maxRepeats 2`; "" for none. */
function limits(record: Record<string, number | undefined>): string {
  return Object.entries(record)
    .filter((entry): entry is [string, number] => entry[1] !== undefined)
    .map(([name, value]) => `${name} ${value}`)
    .join(", ");
}

/** Each --max-* option's field in the API's run policy. */
const RUN_LIMITS = {
  "max-calls": "maxCalls",
  "max-calls-per-tool": "maxCallsPerTool",
  "max-seconds": "maxSeconds",
  "max-cost": "maxCost",
  "max-repeats": "maxRepeats",
} as const satisfies Record<(typeof RUN_LIMIT_OPTIONS)[number], keyof RunPolicy>;

/**
 * The enrichers to send: Toolbus's catalog first (so the file's own enrichers, such as
 * stripMcpForHarness, still have the last word) unless the file already asks for it, or
 * without any addToolbusCatalog when the catalog is turned off. Undefined leaves the field out.
 */
function withToolbusCatalog(given: unknown, catalog: boolean): unknown[] | undefined {
  // Not a list: sent as it is, for the API to name what is wrong with it.
  if (given !== undefined && !Array.isArray(given)) return undefined;
  const enrichers: unknown[] = given ?? [];
  if (!catalog) return given === undefined ? undefined : enrichers.filter((e) => !isCatalog(e));
  return enrichers.some(isCatalog) ? enrichers : [{ type: "addToolbusCatalog" }, ...enrichers];
}

const isCatalog = (enricher: unknown) =>
  typeof enricher === "object" &&
  enricher !== null &&
  (enricher as { type?: unknown }).type === "addToolbusCatalog";

const hasToolbusCatalog = (given: unknown) => Array.isArray(given) && given.some(isCatalog);

/** The API refused to select tools for the agent: a mode it lacks, a role above the key's. */
function isSelectionRefusal(error: unknown): error is ToolbusClientError {
  if (!(error instanceof ToolbusClientError)) return false;
  if (error.status === 403) return true;
  const paths = Array.isArray(error.details)
    ? error.details.map((detail) => (detail as { path?: unknown }).path)
    : [];
  return (
    error.status === 400 &&
    paths.some((path) => ["mode", "role", "agent.mode", "agent.role"].includes(String(path)))
  );
}

async function setEnabled(
  id: string,
  enabled: boolean,
  { client, io, json: asJson }: CommandContext,
): Promise<number> {
  const tool = enabled ? await client.tools.enable(id) : await client.tools.disable(id);
  io.stdout.write(
    asJson
      ? json(tool)
      : `${enabled ? "Enabled" : "Disabled"} tool ${tool.id} (revision ${tool.revision}).\n`,
  );
  return 0;
}

function showCapabilities(
  capabilities: CapabilityStatus[],
  { io, json: asJson }: CommandContext,
): number {
  if (asJson) io.stdout.write(json(capabilities));
  else if (capabilities.length === 0) io.stdout.write("No capabilities are declared.\n");
  else {
    io.stdout.write(
      table(
        ["NAME", "AVAILABLE", "SOURCE", "CHECKED"],
        capabilities.map((capability) => [
          capability.name,
          capability.available ? "yes" : `no (${capability.reason ?? "no reason given"})`,
          capability.source ?? "-",
          capability.checkedAt,
        ]),
      ),
    );
  }
  return 0;
}

/** The toolset in one line, then what changed: what an administrator checks after a write. */
function outcomeSummary(verb: string, { toolset, tools, diff }: RegistrationOutcome): string {
  const count = `${tools.length} tool${tools.length === 1 ? "" : "s"}`;
  const head = `${verb} toolset ${toolset.name} (${toolset.kind}, owner ${toolset.owner}, revision ${toolset.revision}): ${count}.`;
  return `${head}\n\n${diffTable(diff)}`;
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

/** The pattern from --pattern or --pattern-file, as a JSON object (the API judges the rest). */
async function readPattern(
  args: CommandArgs["subscriptions create"],
  io: CommandIo,
): Promise<Record<string, unknown>> {
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
function targetOf(args: CommandArgs["subscriptions create"]): SubscriptionRequest["target"] {
  if (args.webhook !== undefined) return { kind: "webhook", url: args.webhook };
  if (args["bus-arn"] !== undefined) return { kind: "eventbridge", busArn: args["bus-arn"] };
  return { kind: "sqs", queueUrl: args["queue-url"] as string };
}

/** Relative to the current folder when inside it, else absolute. */
function shownPath(cwd: string, target: string): string {
  const inside = relative(cwd, target);
  return inside && !inside.startsWith("..") && !isAbsolute(inside) ? inside : target;
}

async function readInput(args: CommandArgs["call"], io: CommandIo): Promise<unknown> {
  if (args.input !== undefined) return parseJson(args.input, "--input");
  const file = args["input-file"];
  if (file === undefined) return {};
  if (file === "-") return parseJson(await readAll(io.stdin), "the input on standard input");
  return readJsonFile(resolve(io.cwd, file), file);
}

async function readJsonFile(path: string, shown: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === "ENOENT"
        ? `${shown} does not exist.`
        : `Cannot read ${shown}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseJson(text, shown);
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

async function readAll(stream: AsyncIterable<string | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * An MCP servers file with the rendered servers merged in: the file's other keys and other
 * servers stay, a server of the same name is replaced.
 */
async function mergedServersFile(
  target: string,
  servers: { key: string; content: string },
): Promise<string> {
  const rendered = JSON.parse(servers.content) as Record<string, unknown>;
  let existing: Record<string, unknown> = {};
  const text = await readFile(target, "utf8").catch(() => undefined);
  if (text !== undefined) {
    try {
      existing = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new UsageError(`${target} is not JSON: merge the servers into it by hand.`);
    }
    if (typeof existing !== "object" || existing === null || Array.isArray(existing)) {
      throw new UsageError(`${target} is not a JSON object: merge the servers into it by hand.`);
    }
  }
  const before = existing[servers.key];
  const merged = {
    ...rendered,
    ...existing,
    [servers.key]: {
      ...(typeof before === "object" && before !== null ? before : {}),
      ...(rendered[servers.key] as object),
    },
  };
  return `${JSON.stringify(merged, null, 2)}\n`;
}
