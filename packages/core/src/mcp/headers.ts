/**
 * Request headers that place MCP calls; `?mode=` works too for clients that cannot set headers.
 * Agent files that list Toolbus's MCP server write the run id header, so they name it from here.
 */
export const MCP_HEADERS = {
  mode: "x-toolbus-mode",
  runId: "x-toolbus-run-id",
  callId: "x-toolbus-call-id",
  /** `search` for the two-tool surface (`?surface=search` too); see `MCP_SURFACES`. */
  surface: "x-toolbus-surface",
} as const;

/**
 * Which tools `/mcp` lists. `catalog`: every tool the selection offers, as they are.
 * `search`: two tools whatever the catalog holds, so a client's tool list, and a model's
 * prompt cache, never change as tools come and go; the catalog is reached through them.
 */
export const MCP_SURFACES = ["catalog", "search"] as const;
export type McpSurface = (typeof MCP_SURFACES)[number];
