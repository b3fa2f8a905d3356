import { ValidationError } from "@toolbus/wire/errors";
import type { DisallowedTool } from "./mapping";
import type { UniversalTool } from "./vocabulary";

/**
 * An agent in harness-neutral terms; renderers turn it into each harness's agent file.
 * `mode` and `role` are Toolbus's workflow mode and principal role (they choose catalog
 * tools), not any harness's own notion of mode.
 */
export interface Agent {
  /** Also the file name, so it is restricted to names that cannot leave the agents folder. */
  name: string;
  description: string;
  /** The agent's instructions: the body of the file. */
  prompt: string;
  /** Absent: every tool the harness has. Present: only these (an empty list is no tools). */
  tools?: readonly UniversalTool[];
  model?: string;
  mode?: string;
  role?: string;
  tags?: readonly string[];
  disallowedTools?: readonly DisallowedTool[];
}

/** Letters, digits, - and _, starting with a letter or digit: no dots, slashes or backslashes. */
export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const AGENT_NAME_RULE =
  "1-64 letters, digits, - or _, starting with a letter or digit (it becomes a file name)";

/** Throws a ValidationError (400 over HTTP) for an agent no harness file can be written for. */
export function validateAgent(agent: Agent): void {
  const details: { path: string; message: string }[] = [];
  if (typeof agent.name !== "string" || !AGENT_NAME.test(agent.name)) {
    details.push({ path: "agent.name", message: `Must be ${AGENT_NAME_RULE}.` });
  }
  if (typeof agent.description !== "string" || agent.description.trim() === "") {
    details.push({ path: "agent.description", message: "Every harness requires a description." });
  }
  if (typeof agent.prompt !== "string") {
    details.push({ path: "agent.prompt", message: "The prompt must be a string." });
  }
  if (details.length > 0) {
    const summary = details.map((detail) => `${detail.path}: ${detail.message}`).join(" ");
    throw new ValidationError(`The agent is not valid. ${summary}`, { details });
  }
}
