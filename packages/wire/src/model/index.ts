export {
  CALL_STATUSES,
  type CallRecord,
  type CallResult,
  type CallStatus,
  type Citation,
  type ConnectionNeeded,
  callRecord,
  callResult,
  callStatus,
  citation,
  connectionNeeded,
  FAILURE_KINDS,
  type Failure,
  failure,
  MAX_RESULT_BYTES,
  type Principal,
  principal,
} from "./call";
export { type CapabilityStatus, capabilityStatus } from "./capability";
export { type ContentBlock, contentBlock, describeContent } from "./content";
export {
  approvalEventKey,
  EVENT_SCHEMAS,
  MAX_PROGRESS_MESSAGE,
  progressEventKey,
  type RunEvent,
  resultEventKey,
  runEvent,
  scheduledEventKey,
  type ToolCallApprovalRequested,
  type ToolCallProgress,
  type ToolCallScheduled,
  type ToolDefinitionsChanged,
  type ToolResultReceived,
  toolCallApprovalRequested,
  toolCallProgress,
  toolCallScheduled,
  toolDefinitionsChanged,
  toolResultReceived,
} from "./events";
export { type FailureOptions, Failures } from "./failure";
export { callId, capabilityName, runId, toolId, toolsetName } from "./ids";
export {
  type CatalogDiff,
  catalogDiff,
  type HeldReview,
  type HeldToolChange,
  type HttpToolRegistrationInput,
  type HttpToolsetRegistrationInput,
  heldReview,
  heldToolChange,
  type McpToolDefaultsInput,
  type McpToolsetRegistrationInput,
  type SecretHeaderInput,
  type ToolsetRegistration,
  type ToolsetRegistrationInput,
  toolsetRegistration,
} from "./registered";
export {
  isRegisteredSecret,
  REGISTERED_SECRET_PREFIX,
  registeredSecretRule,
} from "./registered-secret";
export {
  type RunBudget,
  type RunPolicy,
  runBudget,
  runPolicy,
} from "./run";
export {
  type Delivery,
  delivery,
  type Subscription,
  type SubscriptionRequest,
  type SubscriptionTarget,
  subscription,
  subscriptionId,
  subscriptionRequest,
  subscriptionTarget,
} from "./subscription";
export {
  CATEGORIES,
  type Category,
  category,
  type ToolSpec,
  type ToolSpecInput,
  type ToolsetSpec,
  toolSpec,
  toolsetSpec,
} from "./tool";
