import { isConnectionHeader, type SecretHeader } from "@toolbus/wire/model/implementation";
import type { ToolsetRegistration } from "@toolbus/wire/model/registered";
import { isRegisteredSecret, registeredSecretRule } from "@toolbus/wire/model/registered-secret";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { StageConfig } from "../../config";
import { type Issue, ValidationError } from "../../errors";
import { isKnownRole } from "../access";

/**
 * Roles and modes an availability names must be the stage's own. `at` is where it was given
 * ("" when the availability is the whole body).
 */
export function availabilityIssues(
  availability: Pick<ToolSpec["availability"], "minRole" | "modes">,
  config: StageConfig,
  at = "availability",
): Issue[] {
  const issues: Issue[] = [];
  const { minRole, modes } = availability;
  const prefix = at ? `${at}.` : "";
  if (minRole !== undefined && !isKnownRole(config, minRole)) {
    issues.push({
      path: `${prefix}minRole`,
      message: `unknown role ${JSON.stringify(minRole)}; one of: ${config.roles.join(", ")}`,
    });
  }
  modes?.forEach((mode, index) => {
    if (!config.modes.available.includes(mode)) {
      issues.push({
        path: `${prefix}modes.${index}`,
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

/**
 * What a registration names that the stage refuses: secrets outside the registered prefix and
 * providers the stage does not connect accounts at, then the roles and modes its tools (or an
 * MCP server's defaults) name.
 */
export function registrationIssues(
  registration: ToolsetRegistration,
  config: StageConfig,
): Issue[] {
  const issues = authIssues(registration, config);
  if (registration.kind === "mcp") {
    const { availability, timeoutMs } = registration.defaults;
    if (availability) {
      issues.push(...availabilityIssues(availability, config, "defaults.availability"));
    }
    issues.push(...timeoutIssues(timeoutMs, config, "defaults.timeoutMs"));
    return issues;
  }
  registration.tools.forEach((tool, index) => {
    issues.push(...timeoutIssues(tool.timeoutMs, config, `tools.${index}.timeoutMs`));
    if (!tool.availability) return;
    issues.push(...availabilityIssues(tool.availability, config, `tools.${index}.availability`));
  });
  return issues;
}

/**
 * A timeout longer than one call may run on the stage: the function running it would be
 * stopped first, and the call would end only at its deadline. Refused, saying the limit.
 */
function timeoutIssues(timeoutMs: number | undefined, config: StageConfig, path: string): Issue[] {
  const longest = config.calls.longestRunSeconds;
  if (timeoutMs === undefined || timeoutMs <= longest * 1000) return [];
  return [
    {
      path,
      message: `is ${timeoutMs} ms, longer than one call may run on this stage (${longest} s, calls.longestRunSeconds); work that takes longer must be split into several calls`,
    },
  ];
}

/**
 * Secrets a registration may not name, and providers the stage does not configure. Secrets are
 * checked here, where registrations are written, and not in the schema stored tools are parsed
 * with: one stored before the rule must keep loading. That leniency goes after 2027-03-31,
 * with the stored schema's (see model/implementation.ts).
 */
function authIssues(registration: ToolsetRegistration, config: StageConfig): Issue[] {
  const auths: { at: string; auth: SecretHeader | undefined }[] = [
    { at: "auth", auth: registration.auth },
    ...(registration.kind === "http"
      ? registration.tools.map((tool, index) => ({ at: `tools.${index}.auth`, auth: tool.auth }))
      : []),
  ];
  return auths.flatMap(({ at, auth }): Issue[] => {
    if (!auth) return [];
    if (isConnectionHeader(auth)) {
      if (config.connections?.providers[auth.provider]) return [];
      const configured = Object.keys(config.connections?.providers ?? {});
      return [
        {
          path: `${at}.provider`,
          message: `names ${auth.provider}, which is not a provider this stage connects accounts at (connections.providers: ${configured.length > 0 ? configured.join(", ") : "none configured"})`,
        },
      ];
    }
    return isRegisteredSecret(auth.secret)
      ? []
      : [
          {
            path: `${at}.secret`,
            message: `names ${auth.secret}, but ${registeredSecretRule(auth.secret)}`,
          },
        ];
  });
}
