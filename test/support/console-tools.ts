import { defineTool, ToolFailure } from "@toolbus/core";
import { z } from "zod";

/** The toolset of the console tests' own tools. */
export const CONSOLE_TEST_TOOLSET = {
  name: "console_test",
  description: "Tools of the console's tests",
  owner: "tests",
  kind: "builtin",
} as const;

/** Always fails as an upstream that says no would: upstream_error, retryable, replan. */
export const refuses = defineTool({
  spec: {
    id: "test_refuses",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Refuser",
    description: "Always fails, as an upstream that says no would.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({}),
  output: z.object({}),
  async execute() {
    throw new ToolFailure({
      kind: "upstream_error",
      message: "The upstream said no.",
      retryable: true,
      recovery: "replan",
    });
  },
});
