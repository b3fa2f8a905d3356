import { networkCapability } from "@toolbus/core/capabilities";
import { withFunctionSecrets } from "@toolbus/core/deployment";
import { createToolHandler, deploymentFromEnv, toolRuntimeDeps } from "@toolbus/core/runtime";
import { calendar, googleCalendarCapability } from "@toolbus/tools/calendar";

/**
 * Runs scheduled calendar calls delivered by the bus.
 * Only what this tool runs: its module, the detectors of the capabilities it requires, and SSM for the secrets its function binds, loaded on the first event.
 */
export const handler = withFunctionSecrets(
  createToolHandler(calendar, () =>
    toolRuntimeDeps(deploymentFromEnv(), {
      capabilities: [googleCalendarCapability, networkCapability],
    }),
  ),
);
