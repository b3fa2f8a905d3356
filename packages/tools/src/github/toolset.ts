import type { ToolsetSpec } from "@toolbus/wire/model";

export const githubToolset: ToolsetSpec = {
  name: "github",
  description:
    "Read-only access to GitHub through its REST API with the stage's token: files, READMEs, " +
    "releases, issues and pull requests, and code search. Works with GitHub Enterprise too.",
  owner: "toolbus",
  kind: "builtin",
};
