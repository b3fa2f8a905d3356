import { z } from "zod";
import type { CapabilityStatus } from "../../schemas.js";
import { command } from "../command.js";
import type { CommandContext } from "../context.js";
import { json, table } from "../format.js";

// `toolbus capabilities ...`: what the stage can do (tokens, services), as last detected.

export const capabilitiesCommands = {
  "capabilities list": command({
    usage: "capabilities list",
    summary: "Show each capability: available or why not, where it was read, when checked.",
    args: [],
    options: {},
    schema: z.object({}),
    run: async (_args, context) =>
      showCapabilities(await context.client.capabilities.list(), context),
  }),

  "capabilities refresh": command({
    usage: "capabilities refresh",
    summary: "Detect and verify every capability again (admin), then show them.",
    args: [],
    options: {},
    schema: z.object({}),
    run: async (_args, context) =>
      showCapabilities(await context.client.capabilities.refresh(), context),
  }),
};

function showCapabilities(
  capabilities: CapabilityStatus[],
  { io, json: asJson }: CommandContext,
): number {
  if (asJson) io.stdout.write(json(capabilities));
  else if (capabilities.length === 0) io.stdout.write("No capabilities are declared.\n");
  else {
    io.stdout.write(
      table(
        ["NAME", "AVAILABLE", "SOURCE", "CHECKED"],
        capabilities.map((capability) => [
          capability.name,
          capability.available ? "yes" : `no (${capability.reason ?? "no reason given"})`,
          capability.source ?? "-",
          capability.checkedAt,
        ]),
      ),
    );
  }
  return 0;
}
