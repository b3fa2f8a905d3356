import type { ToolsetSpec } from "@toolbus/wire/model";

export const staticLinksToolset: ToolsetSpec = {
  name: "static_links",
  description:
    "Links the deployment's operator configured for the project: source repository, " +
    "community chat and forums, social accounts, website and documentation.",
  owner: "toolbus",
  kind: "builtin",
};

export const textAnalysisToolset: ToolsetSpec = {
  name: "text_analysis",
  description:
    "Offline, deterministic measurements of text an agent wrote or was given, such as " +
    "readability scores.",
  owner: "toolbus",
  kind: "builtin",
};
