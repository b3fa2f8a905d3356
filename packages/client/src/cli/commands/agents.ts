import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { z } from "zod";
import type { RenderAgentRequest } from "../../client.js";
import { ToolbusClientError } from "../../errors.js";
import type { Harness } from "../../generated/catalog-types.js";
import type { RenderedAgentFile } from "../../schemas.js";
import { option } from "../arguments.js";
import { command } from "../command.js";
import { UsageError, withHint } from "../errors.js";
import { json } from "../format.js";
import { readJsonFile } from "../input.js";

// `toolbus render-agent`: an agent file for a harness, rendered by the API from a JSON agent
// definition, printed or written where the harness reads it.

// Listed here rather than imported: core's harness module brings its renderers (and their
// YAML library) into the CLI's bundle. The checks below fail to compile when the generated
// Harness type and this list disagree.
const HARNESSES = ["claude-code", "opencode", "copilot"] as const satisfies readonly Harness[];
type Unlisted = Exclude<Harness, (typeof HARNESSES)[number]>;
const everyHarnessListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyHarnessListed;

const HARNESS_CHOICES = [...HARNESSES, "all"] as const;

export const agentsCommands = {
  "render-agent": command({
    usage:
      "render-agent <file> --harness <claude-code|opencode|copilot|all> [--out <dir>] [--no-toolbus-tools]",
    summary:
      "Render an agent file for a harness from a JSON agent definition, with Toolbus's tools.",
    args: ["file"],
    options: { harness: option.value, out: option.value, "no-toolbus-tools": option.flag },
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
    schema: z.object({
      file: z.string().min(1),
      harness: z
        .enum(HARNESS_CHOICES, { error: `--harness is one of ${HARNESS_CHOICES.join(", ")}` })
        .optional(),
      out: z.string().min(1).optional(),
      "no-toolbus-tools": z.boolean().optional(),
    }),
    async run(args, { client, io, json: asJson }) {
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
        .renderAgent({
          ...body,
          harness,
          ...(enrichers ? { enrichers } : {}),
        } as RenderAgentRequest)
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
                files: files.map((rendered, index) => ({
                  ...rendered,
                  writtenTo: written[index],
                })),
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
  }),
};

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

/** Relative to the current folder when inside it, else absolute. */
function shownPath(cwd: string, target: string): string {
  const inside = relative(cwd, target);
  return inside && !inside.startsWith("..") && !isAbsolute(inside) ? inside : target;
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
