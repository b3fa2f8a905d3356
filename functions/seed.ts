import { createToolbus, deploymentFromEnv } from "@toolbus/core";
import { withFunctionSecrets } from "@toolbus/core/deployment";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";

/**
 * Run by the stack's Script on every deploy (create and update): writes the built-in catalog
 * (keeping an administrator's enable / disable) and stores fresh, verified capability
 * statuses. A failure fails the deploy, so a stage never runs with an unseeded catalog. The
 * tools' secrets it verifies are bound: read from SSM first.
 */
export const handler = withFunctionSecrets(async () => {
  const toolbus = createToolbus(deploymentFromEnv(), {
    tools: builtinTools,
    toolsets: builtinToolsets,
    capabilities: builtinCapabilities,
  });
  const { written } = await toolbus.seed();
  const capabilities = await toolbus.refreshCapabilities({ verify: true });
  const summary = {
    written,
    capabilities: capabilities.map(({ name, available, reason }) => ({ name, available, reason })),
  };
  console.log(JSON.stringify({ message: "Seeded the catalog", ...summary }));
  return summary;
});
