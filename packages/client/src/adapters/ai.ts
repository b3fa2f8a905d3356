import type { ToolbusClient } from "@toolbus/client";
import { dynamicTool, type JSONSchema7, jsonSchema, type ToolSet } from "ai";
import {
  adapterOptionsOf,
  callForModel,
  selectedTools,
  type ToolbusAdapterOptions,
  type ToolbusToolResult,
} from "./shared.js";

export type { ToolbusAdapterOptions, ToolbusToolResult };

/**
 * The tools Toolbus selects for these options as an AI SDK tool set, keyed by tool id, for
 * `generateText({ tools })` / `streamText`. Each `execute` calls the tool through Toolbus under
 * `runId`, so the call is recorded and announced like any other; the model gets a
 * ToolbusToolResult (a failure it can act on is a result, not a thrown error).
 */
export async function toolbusTools(
  client: ToolbusClient,
  options: ToolbusAdapterOptions,
): Promise<ToolSet> {
  const checked = adapterOptionsOf(options);
  const tools = await selectedTools(client, checked);
  return Object.fromEntries(
    tools.map((spec) => [
      spec.id,
      // Dynamic: the schema is the catalog's JSON Schema, known only at run time. Toolbus
      // validates the input against the tool's own schema on every call.
      dynamicTool({
        description: spec.description,
        title: spec.title,
        inputSchema: jsonSchema(spec.inputSchema as JSONSchema7),
        execute: (input, { abortSignal }): Promise<ToolbusToolResult> =>
          callForModel(client, spec.id, input, { ...checked, signal: abortSignal }),
      }),
    ]),
  );
}
