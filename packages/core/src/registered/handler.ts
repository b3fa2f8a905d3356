import type { CallRecord } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { RegisteredKind } from "@toolbus/wire/model/implementation";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import { runCall } from "../app/calls/lifecycle";
import { networkCapability, withDetectors } from "../app/capabilities/detectors";
import type { SecretSource } from "../outbound/types";
import type { CatalogStore } from "../ports";
import { runWithPolicies } from "../runtime/policies";
import { parseScheduled, type ToolRuntimeDeps } from "../runtime/tool-handler";
import { firstSecret } from "../secrets";
import type { AnyToolDefinition } from "../tool-definition";
import { secretDetectors, secretsOfTool } from "./secrets";

export interface RegisteredRuntimeDeps extends ToolRuntimeDeps {
  catalog: Pick<CatalogStore, "getTool">;
  /** Secrets by name, read at run time (registered after the deploy, so not bound to it). */
  readSecrets(names: readonly string[]): Promise<SecretSource>;
}

/** Makes the runnable tool of a registered spec of one kind (http-tool.ts, mcp-tool.ts). */
export type RegisteredDefinition = (spec: ToolSpec) => AnyToolDefinition;

/**
 * The one handler for every registered tool of a kind. The tool is read from the catalog per
 * call (registrations change without a deploy), then runs through the same policies as a
 * built-in: capability gate, rate limits, cache, timeout, failure kinds. The kind's definition
 * is passed in, so a function carries only its own kind's client (no MCP SDK for http).
 */
export function createRegisteredHandler(
  kind: RegisteredKind,
  define: RegisteredDefinition,
  deps: () => RegisteredRuntimeDeps | Promise<RegisteredRuntimeDeps>,
) {
  return async (event: unknown): Promise<CallRecord | undefined> => {
    const runtime = await deps();
    const detail = parseScheduled(event);
    const spec = await runtime.catalog.getTool(detail.toolId);
    if (!spec || spec.implementation.kind !== kind) {
      // Removed (or re-registered as another kind) after the call was scheduled.
      const failure = Failures.unavailable(
        `${detail.toolId} is no longer registered as an ${kind} tool on this stage.`,
      );
      return runCall(detail, runtime, { timeoutMs: 0 }, async () => ({
        execution: { ok: false, failure },
        cached: false,
        stale: false,
      }));
    }
    const tool = define(spec);
    const names = secretsOfTool(spec);
    const loaded = names.length > 0 ? await runtime.readSecrets(names) : undefined;
    const secret = firstSecret(runtime.secret, loaded);
    const capabilities = withDetectors(runtime.capabilities, [
      networkCapability,
      ...secretDetectors(names),
    ]);
    return runCall(detail, runtime, spec, (claimed, now, reach) =>
      runWithPolicies(tool, claimed, { ...runtime, secret, capabilities, now, ...reach }),
    );
  };
}
