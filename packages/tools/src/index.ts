import type { ToolsetSpec } from "@toolbus/core/model";
import type { AnyToolDefinition } from "@toolbus/core/tool-definition";
import { readabilityAnalyzer } from "./readability";
import { staticLinks } from "./static-links";
import { staticLinksToolset, textAnalysisToolset } from "./toolsets";

export { readabilityAnalyzer, staticLinks, staticLinksToolset, textAnalysisToolset };

/** Every tool this package implements, sorted by id so listings are stable. */
export const builtinTools: readonly AnyToolDefinition[] = Object.freeze(
  [staticLinks, readabilityAnalyzer].sort((a, b) => a.spec.id.localeCompare(b.spec.id, "en")),
);

/** The toolsets of `builtinTools`, sorted by name; all owned by Toolbus itself. */
export const builtinToolsets: readonly ToolsetSpec[] = Object.freeze(
  [staticLinksToolset, textAnalysisToolset].sort((a, b) => a.name.localeCompare(b.name, "en")),
);
