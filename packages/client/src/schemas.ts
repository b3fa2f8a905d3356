import type {
  CallResult,
  Failure,
  RegistrationOutcome,
  WireCallView,
} from "./generated/catalog-types.js";
import type { ToolFallback, ToolOutput } from "./tools.js";

// The types callers see. Answers are parsed with @toolbus/wire/schemas' own schemas (read
// leniently: lenient.ts), and the types of what they describe are generated from those same
// schemas (src/generated). What is here is the client's own: a call typed by its tool.

export type {
  ApiKeyRecord,
  CallApproval,
  CapabilityStatus,
  CatalogDiff,
  Citation,
  Connection,
  ConnectionProvider,
  ConnectLink,
  CreatedApiKey,
  Delivery,
  Disconnected,
  Failure,
  FailuresPage,
  Health,
  HeldSummary,
  HeldToolChange,
  Metrics,
  Principal,
  RegistrationOutcome,
  RenderedAgentFile,
  ReplayResult,
  ReviewDecision,
  Run,
  RunEvent,
  RunPolicies,
  RunPolicy,
  Selection,
  StageEventsPage,
  Subscription,
  SubscriptionRequest,
  SubscriptionTarget,
  SubscriptionWithSecret,
  Tool,
  ToolCallApprovalRequested,
  ToolCallProgress,
  ToolListItem,
  ToolSearch,
  ToolSpec,
  Toolset,
  ToolsetRemoved,
  ToolsetReview,
  ToolsetSpec,
  ToolsetWithTools,
} from "./generated/catalog-types.js";

/** Where a call is: awaiting approval, pending, running, or finished (succeeded or failed). */
export type CallStatus = WireCallView["status"];

/** Set when the tool was unavailable and its fallback answered instead. */
export interface FallbackInfo<From extends string = string, To extends string = string> {
  from: From;
  to: To;
  reason: string;
}

/** What every finished call's result has, whatever its status. */
type ResultFields = Omit<CallResult, "status" | "data" | "failure" | "fallback">;

/**
 * A succeeded call's result. `data` is the tool's output; when `fallback` is set, another
 * tool answered and `data` is that tool's output (typed as such for built-ins).
 */
export type SucceededResult<T extends string = string> = ResultFields &
  (
    | { data: ToolOutput<T>; fallback?: undefined; failure?: undefined }
    | (string extends T
        ? { data: unknown; fallback: FallbackInfo; failure?: undefined }
        : [ToolFallback<T>] extends [never]
          ? never
          : {
              data: ToolOutput<ToolFallback<T>>;
              fallback: FallbackInfo<T, ToolFallback<T>>;
              failure?: undefined;
            })
  );

/** A failed call's result: a result, not an error, with what to do next in `failure`. */
export type FailedResult = ResultFields & {
  data: null;
  failure: Failure;
  fallback?: FallbackInfo;
};

/** Everything a call view has but its status and result. */
type CallFields = Omit<WireCallView, "status" | "result">;

/** A call as the API shows it; narrow on `status` to reach a typed `result`. */
export type CallView<T extends string = string> = CallFields &
  (
    | { status: "succeeded"; result: SucceededResult<T> }
    | { status: "failed"; result: FailedResult }
    | { status: Exclude<CallStatus, "succeeded" | "failed">; result?: undefined }
  );

/** A registration's outcome; `created` is false when it replaced a toolset of that name. */
export type ToolsetRegistered = RegistrationOutcome & { created: boolean };
