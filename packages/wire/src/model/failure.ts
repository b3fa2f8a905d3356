import type { ConnectionNeeded, Failure } from "./call";

/** What a failure may say beyond its kind and message; each kind has defaults that fit it. */
export type FailureOptions = Partial<Pick<Failure, "retryable" | "recovery" | "retryAfterMs">>;

const make =
  (kind: Failure["kind"], defaults: Pick<Failure, "retryable" | "recovery">) =>
  (message: string, options: FailureOptions = {}): Failure => ({
    kind,
    message,
    ...defaults,
    ...options,
  });

/**
 * The one way to write a tool failure. The defaults say what an agent should usually do:
 * an upstream that timed out or erred may answer a retry, a missing capability or a broken
 * tool will not, and every one of them means "plan without this tool for now".
 */
export const Failures = {
  unavailable: make("unavailable", { retryable: false, recovery: "replan" }),
  /** `retryAfterMs` when the upstream or the limit says how long to wait. */
  rateLimited: (message: string, retryAfterMs?: number, options: FailureOptions = {}): Failure =>
    make("rate_limited", { retryable: true, recovery: "replan" })(message, {
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...options,
    }),
  timeout: make("timeout", { retryable: true, recovery: "replan" }),
  upstreamError: make("upstream_error", { retryable: true, recovery: "replan" }),
  invalidOutput: make("invalid_output", { retryable: false, recovery: "replan" }),
  internal: make("internal", { retryable: false, recovery: "replan" }),
  /** The run may make no more calls of this kind: finish with what it has (or replan). */
  budgetExceeded: make("budget_exceeded", { retryable: false, recovery: "finish" }),
  /** The same call again would loop: use what the earlier ones returned, or change course. */
  loopDetected: make("loop_detected", { retryable: false, recovery: "replan" }),
  /** A person said no: do it another way, or not at all. */
  denied: make("denied", { retryable: false, recovery: "replan" }),
  /** Nobody said yes in time: do it another way, or ask again later. */
  approvalExpired: make("approval_expired", { retryable: false, recovery: "replan" }),
  /** Stopped at its owner's request: whoever asked knows why; do not call it again unasked. */
  cancelled: make("cancelled", { retryable: false, recovery: "replan" }),
  /**
   * The tool acts as the caller and the caller's account at `connection.provider` is not
   * connected (or expired): a person connects at `connectUrl`, then the call can be made again.
   */
  connectionRequired: (message: string, connection: ConnectionNeeded): Failure => ({
    kind: "connection_required",
    message,
    retryable: false,
    recovery: "replan",
    connection,
  }),
} as const;
