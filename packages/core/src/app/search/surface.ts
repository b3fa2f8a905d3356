/**
 * The two tools of the search surface (`/mcp?surface=search`), named once for the MCP server
 * that offers them and the prompt section that tells agents about them.
 */
export const SEARCH_TOOLS = "search_tools";
export const CALL_TOOL = "call_tool";
