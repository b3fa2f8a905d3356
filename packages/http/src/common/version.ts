/** The version of Toolbus's HTTP surfaces: the OpenAPI document and the MCP server both report it. */
export const API_VERSION = "0.1.0";
