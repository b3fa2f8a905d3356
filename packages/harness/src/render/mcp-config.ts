import type { McpServerConfig, ToolMap } from "../enrichers";
import { HARNESS_TABLE, type Harness } from "../harness-table";
import { claudeCodeServer } from "./claude-code";
import { opencodeServer } from "./opencode";

/**
 * The project file a harness reads MCP servers from, when that is not the agent file. It
 * holds only the agent's servers under `key`: merge it into an existing file of that name.
 */
export interface McpServersFile {
  /** Relative to the project root. */
  path: string;
  /** The top-level key whose entries are the servers. */
  key: string;
  content: string;
}

const SERVER_WRITERS: Partial<Record<Harness, (config: McpServerConfig) => unknown>> = {
  "claude-code": claudeCodeServer,
  opencode: opencodeServer,
};

/** OpenCode's file names its schema, as OpenCode's own examples do, so editors validate it. */
const PREAMBLE: Partial<Record<Harness, Record<string, unknown>>> = {
  opencode: { $schema: "https://opencode.ai/config.json" },
};

/** The MCP servers file for `harness`, or undefined when the agent file carries them or there are none. */
export function mcpServersFile(harness: Harness, toolMap: ToolMap): McpServersFile | undefined {
  const location = HARNESS_TABLE.harnesses[harness].mcpServersFile;
  const write = SERVER_WRITERS[harness];
  const servers = Object.entries(toolMap.mcpServers);
  if (location === null || write === undefined || servers.length === 0) return undefined;
  const content = {
    ...PREAMBLE[harness],
    [location.key]: Object.fromEntries(servers.map(([name, config]) => [name, write(config)])),
  };
  return { ...location, content: `${JSON.stringify(content, null, 2)}\n` };
}
