import { resolve } from "node:path";
import { toolId, toolsetName } from "@toolbus/wire/model";
import { z } from "zod";
import type { ToolsetRegistration } from "../../registration.js";
import type { RegistrationOutcome } from "../../schemas.js";
import { option, text } from "../arguments.js";
import { command } from "../command.js";
import type { CommandIo } from "../context.js";
import { UsageError } from "../errors.js";
import { diffTable, fields, json, list, table } from "../format.js";
import { parseJson, readAll, readJsonFile } from "../input.js";

// `toolbus toolsets ...`: the catalog's toolsets, and (admin) registering, refreshing and
// removing the http and MCP ones.

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
