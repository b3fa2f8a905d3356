/**
 * Request headers that place MCP calls; `?mode=` works too for clients that cannot set headers.
 * Agent files that list Toolbus's MCP server write the run id header, so they name it from here.
 */
export const MCP_HEADERS = {
  mode: "x-toolbus-mode",
  runId: "x-toolbus-run-id",
  callId: "x-toolbus-call-id",
} as const;
