// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` here is the harnesses' own syntax for reading the environment, not a JavaScript template.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";

/**
 * Each harness's reading of a project's agent file and MCP configuration, as its
 * documentation describes it: where the server is configured, which syntax reads the
 * environment and what an unset variable becomes. Strict schemas, so a field the harness
 * would not understand fails the test instead of being ignored here.
 */

/** What a harness connects to for one MCP server, after its own environment expansion. */
export interface HarnessConnection {
  url: string;
  headers: Record<string, string>;
  /** The server's tools the agent may call, by their MCP names. */
  tools: string[];
}

export type Environment = Readonly<Record<string, string | undefined>>;

/** Thrown where the harness itself would refuse to load the server. */
export class HarnessRefusal extends Error {
  override name = "HarnessRefusal";
}

const headers = z.record(z.string(), z.string());

/**
 * Claude Code: the subagent's `mcpServers` names servers configured in `.mcp.json`, where
 * `${VAR}` and `${VAR:-default}` are expanded in url and headers, and a required variable
 * that is unset keeps the server from loading.
 */
export async function readClaudeCode(
  root: string,
  agent: string,
  server: string,
  env: Environment,
): Promise<HarnessConnection> {
  const frontmatter = z
    .object({ tools: z.string(), mcpServers: z.array(z.string()) })
    .loose()
    .parse(await frontmatterOf(join(root, ".claude/agents", `${agent}.md`)));
  if (!frontmatter.mcpServers.includes(server)) throw new Error(`${agent} does not use ${server}`);
  const file = z
    .object({
      mcpServers: z.record(
        z.string(),
        z
          .object({ type: z.literal("http"), url: z.string(), headers: headers.optional() })
          .strict(),
      ),
    })
    .strict()
    .parse(JSON.parse(await readFile(join(root, ".mcp.json"), "utf8")));
  const config = file.mcpServers[server];
  if (!config) throw new Error(`.mcp.json has no ${server}`);
  const expand = (value: string) =>
    value.replace(/\$\{([^}:]+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
      const value = env[name];
      if (value !== undefined && value !== "") return value;
      if (fallback !== undefined) return fallback;
      throw new HarnessRefusal(`Missing environment variable ${name} for ${server}`);
    });
  const prefix = `mcp__${server}__`;
  return {
    url: expand(config.url),
    headers: mapValues(config.headers ?? {}, expand),
    tools: frontmatter.tools
      .split(", ")
      .filter((tool) => tool.startsWith(prefix))
      .map((tool) => tool.slice(prefix.length)),
  };
}

/**
 * OpenCode: MCP servers live in `opencode.json` under `mcp`; `{env:VAR}` is replaced in the
 * file's text before it is parsed, an unset variable by an empty string. The agent's
 * `permission` map allows the server's tools as `<server>_<tool>`.
 */
export async function readOpencode(
  root: string,
  agent: string,
  server: string,
  env: Environment,
): Promise<HarnessConnection> {
  const frontmatter = z
    .object({ permission: z.record(z.string(), z.enum(["allow", "ask", "deny"])) })
    .loose()
    .parse(await frontmatterOf(join(root, ".opencode/agents", `${agent}.md`)));
  const text = (await readFile(join(root, "opencode.json"), "utf8")).replace(
    /\{env:([^}]+)\}/g,
    (_, name: string) => env[name] ?? "",
  );
  const file = z
    .object({
      $schema: z.string(),
      mcp: z.record(
        z.string(),
        z
          .object({
            type: z.literal("remote"),
            url: z.string(),
            oauth: z.literal(false),
            headers: headers.optional(),
          })
          .strict(),
      ),
    })
    .strict()
    .parse(JSON.parse(text));
  const config = file.mcp[server];
  if (!config) throw new Error(`opencode.json has no ${server}`);
  const prefix = `${server}_`;
  return {
    url: config.url,
    headers: config.headers ?? {},
    tools: Object.entries(frontmatter.permission)
      .filter(([key, action]) => key.startsWith(prefix) && action === "allow")
      .map(([key]) => key.slice(prefix.length)),
  };
}

/**
 * GitHub Copilot: the agent file's `mcp-servers` configures the server; `$VAR`, `${VAR}` and
 * `${VAR:-default}` are replaced, and only variables named `COPILOT_MCP_…` are available.
 */
export async function readCopilot(
  root: string,
  agent: string,
  server: string,
  env: Environment,
): Promise<HarnessConnection> {
  const frontmatter = z
    .object({
      tools: z.array(z.string()),
      "mcp-servers": z.record(
        z.string(),
        z
          .object({
            type: z.literal("http"),
            url: z.string(),
            headers: headers.optional(),
            tools: z.array(z.string()),
          })
          .strict(),
      ),
    })
    .loose()
    .parse(await frontmatterOf(join(root, ".github/agents", `${agent}.agent.md`)));
  const config = frontmatter["mcp-servers"][server];
  if (!config) throw new Error(`${agent} has no ${server}`);
  const lookup = (name: string, fallback?: string) => {
    if (!name.startsWith("COPILOT_MCP_")) {
      throw new HarnessRefusal(`${name} is not available to MCP servers (no COPILOT_MCP_ prefix)`);
    }
    const value = env[name];
    return value !== undefined && value !== "" ? value : (fallback ?? "");
  };
  const expand = (value: string) =>
    value
      .replace(
        /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
        (_, name: string, fallback?: string) => lookup(name, fallback),
      )
      .replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => lookup(name));
  const prefix = `${server}/`;
  const listed = frontmatter.tools
    .filter((tool) => tool.startsWith(prefix))
    .map((tool) => tool.slice(prefix.length));
  return {
    url: expand(config.url),
    headers: mapValues(config.headers ?? {}, expand),
    tools: listed.filter((tool) => config.tools.includes("*") || config.tools.includes(tool)),
  };
}

async function frontmatterOf(path: string): Promise<unknown> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(await readFile(path, "utf8"));
  if (!match) throw new Error(`${path} has no frontmatter`);
  return parse(match[1] ?? "");
}

function mapValues(
  record: Record<string, string>,
  map: (value: string) => string,
): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}
