import { type Agent, validateAgent } from "../agent";
import { compose, type Enricher, initialToolMap } from "../enrichers";
import { HARNESSES, type Harness } from "../harness-table";
import { disallowedNames, mapTools } from "../mapping";
import { claudeCodeFrontmatter } from "./claude-code";
import type { HarnessFrontmatter, RenderInput } from "./context";
import { copilotFrontmatter } from "./copilot";
import { agentFilePath, formatAgentFile } from "./frontmatter";
import { type McpServersFile, mcpServersFile } from "./mcp-config";
import { type OpencodeMode, type OpencodeToolFormat, opencodeFrontmatter } from "./opencode";
import type { OutputFormat } from "./output-format";

export interface RenderOptions {
  /** Markdown with YAML frontmatter (default), or the same fields as JSON or YAML. */
  format?: OutputFormat;
  /** Applied left to right before mapping. */
  enrichers?: Enricher | readonly Enricher[];
  /** OpenCode only: the `permission:` map (default) or the deprecated `tools:` map. */
  opencodeTools?: OpencodeToolFormat;
  /** OpenCode only: its agent mode (`primary`, `subagent`, `all`). */
  opencodeMode?: OpencodeMode;
}

export interface RenderedAgentFile {
  harness: Harness;
  /** Relative to the project root. */
  path: string;
  content: string;
  warnings: string[];
  /** Where the harness reads the agent's MCP servers from, when not the agent file. */
  mcpServersFile?: McpServersFile;
}

/**
 * The agent file `harness` reads, at its conventional path. Pure and deterministic: the same
 * agent and options give the same bytes. Throws ValidationError for an agent whose name could
 * leave the agents folder.
 */
export function render(
  harness: Harness,
  agent: Agent,
  options: RenderOptions = {},
): RenderedAgentFile {
  validateAgent(agent);
  const enricher = Array.isArray(options.enrichers)
    ? compose(options.enrichers)
    : ((options.enrichers as Enricher | undefined) ?? compose([]));
  const toolMap = enricher(harness, agent, initialToolMap(agent));
  const disallowedTools = agent.disallowedTools ?? [];
  const input: RenderInput = {
    agent,
    toolMap,
    mapped: mapTools(harness, toolMap.tools, { disallowedTools }),
    disallowed: disallowedNames(harness, disallowedTools),
  };
  const { frontmatter, warnings } = harnessFrontmatter(harness, input, options);
  const format = options.format ?? "markdown";
  const serversFile = mcpServersFile(harness, toolMap);
  return {
    harness,
    path: agentFilePath(harness, agent.name, format),
    content: formatAgentFile(frontmatter, agent.prompt, format),
    warnings: [...new Set([...toolMap.warnings, ...input.mapped.warnings, ...warnings])],
    ...(serversFile ? { mcpServersFile: serversFile } : {}),
  };
}

/** The agent for every harness, in a fixed order. */
export function renderAll(agent: Agent, options: RenderOptions = {}): RenderedAgentFile[] {
  return HARNESSES.map((harness) => render(harness, agent, options));
}

function harnessFrontmatter(
  harness: Harness,
  input: RenderInput,
  options: RenderOptions,
): HarnessFrontmatter {
  switch (harness) {
    case "claude-code":
      return claudeCodeFrontmatter(input);
    case "opencode":
      return opencodeFrontmatter(input, {
        ...(options.opencodeTools ? { tools: options.opencodeTools } : {}),
        ...(options.opencodeMode ? { mode: options.opencodeMode } : {}),
      });
    case "copilot":
      return copilotFrontmatter(input);
  }
}
