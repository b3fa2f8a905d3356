import type { ToolsetSpec } from "@toolbus/wire/model";

export const webSearchToolset: ToolsetSpec = {
  name: "web_search",
  description:
    "Searches the public web for current information and sources to cite, through " +
    "DuckDuckGo, the Brave Search API or a self-hosted SearXNG instance.",
  owner: "toolbus",
  kind: "builtin",
};
