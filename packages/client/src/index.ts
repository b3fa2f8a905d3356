export {
  type CallOptions,
  createToolbusClient,
  type HarnessChoice,
  type Prompt,
  type PromptRequest,
  type PromptTool,
  type RenderAgentRequest,
  type RenderAgentResult,
  type SelectRequest,
  ToolbusClient,
  type ToolbusClientOptions,
  type ToolFilters,
} from "./client";
export { ToolbusClientError, type ToolbusClientErrorOptions } from "./errors";
export type { EventsOptions, RunEventStream } from "./events";
export type {
  ApiKeyRecord,
  CallStatus,
  CallView,
  CapabilityStatus,
  Citation,
  CreatedApiKey,
  FailedResult,
  Failure,
  FallbackInfo,
  Health,
  Principal,
  RenderedAgentFile,
  RunEvent,
  Selection,
  SucceededResult,
  Tool,
  ToolListItem,
  Toolset,
  ToolsetWithTools,
} from "./schemas";
export { type SseMessage, SseParser } from "./sse";
export type {
  BuiltinToolId,
  BuiltinTools,
  ToolFallback,
  ToolId,
  ToolInput,
  ToolOutput,
} from "./tools";
