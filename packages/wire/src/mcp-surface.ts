/**
 * What an MCP client sees of Toolbus's `/mcp` endpoint: the headers it may send, the surfaces
 * it may ask for and the two tools of the search surface. Named here, below every layer, so
 * the MCP server that offers them, the prompt that tells agents about them and the agent
 * files that configure a client all read one definition without reaching into each other.
 */

/** Request headers that place MCP calls; `?mode=` works too for clients that cannot set headers. */
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

/** The two tools of the search surface (`/mcp?surface=search`). */
export const SEARCH_TOOLS = "search_tools";
export const CALL_TOOL = "call_tool";
