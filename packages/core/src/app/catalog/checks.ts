import type { StageConfig } from "../../config";
import { type Issue, ValidationError } from "../../errors";
import type { ToolsetRegistration } from "../../model/registered";
import type { ToolSpec } from "../../model/tool";

/** Roles and modes an availability names must be the stage's own. */
export function availabilityIssues(
  availability: Pick<ToolSpec["availability"], "minRole" | "modes">,
  config: StageConfig,
  at = "availability",
): Issue[] {
  const issues: Issue[] = [];
  const { minRole, modes } = availability;
  if (minRole !== undefined && !config.roles.includes(minRole)) {
    issues.push({
      path: `${at}.minRole`,
      message: `unknown role ${JSON.stringify(minRole)}; one of: ${config.roles.join(", ")}`,
    });
  }
  modes?.forEach((mode, index) => {
    if (!config.modes.available.includes(mode)) {
      issues.push({
        path: `${at}.modes.${index}`,
        message: `unknown mode ${JSON.stringify(mode)}; one of: ${config.modes.available.join(", ")}`,
      });
    }
  });
  return issues;
}

/** Throws one ValidationError listing every issue, or returns when there is none. */
export function refuseIssues(what: string, issues: readonly Issue[]): void {
  const [first] = issues;
  if (!first) return;
  throw new ValidationError(`${what} is not valid: ${first.path} ${first.message}.`, {
    details: issues,
  });
}

/** The roles and modes a registration's tools (or an MCP server's defaults) name. */
export function registrationIssues(
  registration: ToolsetRegistration,
  config: StageConfig,
): Issue[] {
  if (registration.kind === "mcp") {
    const { availability } = registration.defaults;
    return availability ? availabilityIssues(availability, config, "defaults.availability") : [];
  }
  return registration.tools.flatMap((tool, index) =>
    availabilityIssues(tool.availability, config, `tools.${index}.availability`),
  );
}
