import { Failures } from "@toolbus/wire/model/failure";
import {
  isConnectionHeader,
  type SecretHeader,
  secretCapabilityName,
  secretName as secretNameSchema,
  secretOfAuth,
} from "@toolbus/wire/model/implementation";
import {
  isRegisteredSecret,
  REGISTERED_SECRET_PREFIX,
  registeredSecretRule,
} from "@toolbus/wire/model/registered-secret";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { type CapabilityDetector, secretCapability } from "../app/capabilities/detectors";
import { connectionSecret } from "../connections/credentials";
import type { SecretSource } from "../outbound/types";
import { ToolFailure } from "../tool-definition";

/**
 * The auth header of a registered tool, its value read now; never logged or stored. A header
 * naming a provider sends the caller's own token: a call of a tool acting as its caller has
 * it under `connectionSecret(provider)` (runtime/policies.ts); anywhere else it is absent.
 */
export function authHeaders(
  auth: SecretHeader | undefined,
  secret: SecretSource,
  toolId: string,
): Record<string, string> {
  if (!auth) return {};
  if (isConnectionHeader(auth)) {
    const token = secret(connectionSecret(auth.provider));
    if (!token) {
      throw new ToolFailure(
        Failures.unavailable(
          `${toolId} is unavailable: it sends each caller's own ${auth.provider} token, and there is no caller's ${auth.provider} connection here.`,
        ),
      );
    }
    return { [auth.header]: `${auth.prefix}${token}` };
  }
  // Refused before the read: this function's own secrets (the admin key, a built-in tool's)
  // may be in `secret`, and none of them may leave with a registered tool's request.
  if (!isRegisteredSecret(auth.secret)) {
    throw new ToolFailure(
      Failures.unavailable(`${toolId} is unavailable: ${outsidePrefix(auth.secret)}`),
    );
  }
  const value = secret(auth.secret);
  if (!value) {
    throw new ToolFailure(
      Failures.unavailable(`${toolId} is unavailable: ${auth.secret} is not set on this stage.`),
    );
  }
  return { [auth.header]: `${auth.prefix}${value}` };
}

/** Secret names a registered tool's calls need. */
export function secretsOfTool(spec: ToolSpec): string[] {
  const implementation = spec.implementation;
  const name = implementation.kind !== "builtin" ? secretOfAuth(implementation.auth) : undefined;
  return name ? [name] : [];
}

/** Every secret a catalog's registered toolsets reference, sorted, once each. */
export function referencedSecrets(
  toolsets: readonly ToolsetSpec[],
  tools: readonly ToolSpec[],
): string[] {
  const names = new Set<string>();
  for (const toolset of toolsets) {
    const name = secretOfAuth(toolset.source?.auth);
    if (name) names.add(name);
  }
  for (const tool of tools) for (const name of secretsOfTool(tool)) names.add(name);
  return [...names].sort();
}

/**
 * A capability per referenced secret: present when the secret is set on this stage. A secret
 * outside the registered prefix (a registration stored before the rule) is never present and
 * never read: its tools are unavailable, with the rule and the fix as the reason. That case goes
 * after 2027-03-31, with the lenient secret name (see model/implementation.ts).
 */
export function secretDetectors(names: readonly string[]): CapabilityDetector[] {
  return names
    .filter((name) => secretNameSchema.safeParse(name).success)
    .map((name) => (isRegisteredSecret(name) ? stageSecret(name) : forbiddenSecret(name)));
}

function stageSecret(name: string): CapabilityDetector {
  return secretCapability(
    secretCapabilityName(name),
    name,
    `The secret ${name}, referenced by a registered toolset.`,
  );
}

function forbiddenSecret(name: string): CapabilityDetector {
  const check = {
    available: false,
    reason: outsidePrefix(name),
    source: `rule:${REGISTERED_SECRET_PREFIX}*`,
  };
  return {
    name: secretCapabilityName(name),
    description: `The secret ${name}, referenced by a registered toolset but outside ${REGISTERED_SECRET_PREFIX}*.`,
    detect: () => check,
  };
}

/** Why a stored registration's secret is not read, and how to fix it. */
function outsidePrefix(name: string): string {
  return `${name} is not read: ${registeredSecretRule(name)}. Set the secret under a ${REGISTERED_SECRET_PREFIX} name and register the toolset again naming it.`;
}
