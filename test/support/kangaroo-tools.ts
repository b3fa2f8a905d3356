import { defineTool } from "@toolbus/core";
import { z } from "zod";

/**
 * A test tool of `toolset` about kangaroos, so one query reaches every tool of a kit; `spec`
 * overrides what a test varies (availability, requirements, a description of its own).
 */
export function kangarooTool(
  toolset: string,
  id: string,
  title: string,
  spec: Record<string, unknown> = {},
) {
  return defineTool({
    spec: {
      id,
      toolset,
      title,
      description: `Counts kangaroos: ${title.toLowerCase()}.`,
      usageHint: "When kangaroos need counting.",
      category: "utility",
      ...spec,
    },
    input: z.object({ text: z.string() }).strict(),
    output: z.object({ echoed: z.string() }),
    execute: async (input) => ({ output: input.text, data: { echoed: input.text } }),
  });
}
