import { DynamicStructuredTool } from "@langchain/core/tools";
import type { ToolbusClient } from "@toolbus/client";
import {
  adapterOptionsOf,
  callForModel,
  selectedTools,
  type ToolbusAdapterOptions,
  type ToolbusToolResult,
} from "./shared.js";

export type { ToolbusAdapterOptions, ToolbusToolResult };

/**
 * The tools Toolbus selects for these options as LangChain.js tools (`model.bindTools(tools)`,
 * agents, `tool.invoke(toolCall)`). Each calls its tool through Toolbus under `runId` and
 * returns a ToolbusToolResult as JSON text; LangChain checks the input against the catalog's
 * JSON Schema first, and Toolbus against the tool's own schema.
 */
export async function toolbusTools(
  client: ToolbusClient,
  options: ToolbusAdapterOptions,
): Promise<DynamicStructuredTool[]> {
  const checked = adapterOptionsOf(options);
  const specs = await selectedTools(client, checked);
  return specs.map(
    (spec) =>
      new DynamicStructuredTool({
        name: spec.id,
        description: spec.description,
        schema: spec.inputSchema,
        func: async (input: unknown, _runManager, config): Promise<string> =>
          JSON.stringify(
            await callForModel(client, spec.id, input, { ...checked, signal: config?.signal }),
          ),
      }),
  );
}
