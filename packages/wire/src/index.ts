export * from "./errors";
export * from "./mcp-surface";
export * from "./schemas/index";
