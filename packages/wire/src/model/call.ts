import * as z from "zod";
import { contentBlock } from "./content";
import { callId, runId, toolId, toolsetName } from "./ids";
import { runBudget } from "./run";

export const FAILURE_KINDS = [
  "unavailable",
  "rate_limited",
  "timeout",
  "upstream_error",
  "invalid_output",
  "internal",
  /** The run's policy refused the call: its calls, cost or time are used up. */
  "budget_exceeded",
  /** The run's policy refused the call: the same tool with the same input, too many times. */
  "loop_detected",
  /** A person denied the call its approval. */
  "denied",
  /** Nobody decided on the call's approval in time. */
  "approval_expired",
  /** Someone the call belongs to asked it to stop, and it stopped before finishing. */
  "cancelled",
  /**
   * The tool acts as the caller on an upstream (a GitHub, Google or registered provider
   * account) and the caller has no usable connection to it: connect, then call again.
   */
  "connection_required",
] as const;

/**
 * What a `connection_required` failure tells the agent and its person: which provider, the
 * scopes the tool needs, why, and where a person connects (a link for a browser; it holds a
 * single-use ticket, never a token).
 */
export const connectionNeeded = z.object({
  provider: z.string().min(1).max(64),
  scopes: z.array(z.string()).max(50),
  /** `not_connected`: never connected; `expired`: the provider refused a refresh, or the stage's key is gone. */
  reason: z.enum(["not_connected", "expired"]),
  /** Where a person opens the connection (`GET /connect/{provider}?ticket=…`); absent when the stage has no public URL. */
  connectUrl: z.string().optional(),
});
export type ConnectionNeeded = z.infer<typeof connectionNeeded>;

/** A tool failure is a result an agent can act on, not an HTTP error. */
export const failure = z.object({
  kind: z.enum(FAILURE_KINDS),
  message: z.string(),
  retryable: z.boolean(),
  retryAfterMs: z.number().int().nonnegative().optional(),
  /** correct_call: fix the input and retry; replan: stop using this tool this turn; finish. */
  recovery: z.enum(["correct_call", "replan", "finish"]),
  /** The JSON-RPC error a registered MCP server answered, passed on as sent to an MCP caller. */
  mcpError: z.object({ code: z.number().int(), data: z.unknown().optional() }).strict().optional(),
  /** On `connection_required`: the connection the call needs. */
  connection: connectionNeeded.optional(),
});
export type Failure = z.infer<typeof failure>;

export const citation = z.object({
  title: z.string().optional(),
  url: z.string(),
  snippet: z.string().optional(),
});
export type Citation = z.infer<typeof citation>;

/**
 * The W3C trace a call belongs to (observability/trace-context.ts): the caller's trace id and
 * span, or a trace started when the call came without one. Carried by both events.
 */
/** Longest message a call's progress step (ToolCallProgress) carries; a longer one is cut. */
export const MAX_PROGRESS_MESSAGE = 500;

export const traceContext = z.object({
  traceId: z.string().regex(/^[0-9a-f]{32}$/),
  parentId: z.string().regex(/^[0-9a-f]{16}$/),
  sampled: z.boolean(),
});

export const CALL_STATUSES = [
  "awaiting_approval",
  "pending",
  "running",
  "succeeded",
  "failed",
] as const;
export const callStatus = z.enum(CALL_STATUSES);
export type CallStatus = z.infer<typeof callStatus>;

/**
 * Who a call is for: an API key's owner, a person signed in with OAuth, or an end user a
 * trusted key acts for. The optional fields were added later; records without them still parse.
 */
export const principal = z.object({
  id: z.string().min(1),
  role: z.string().min(1),
  /** A person signed in with OAuth: the token's `iss`, and its `sub` (the id derives from both). */
  issuer: z.string().optional(),
  subject: z.string().optional(),
  /** An end user named by a key allowed to act for end users: that key's id. */
  actingKeyId: z.string().optional(),
});
export type Principal = z.infer<typeof principal>;

/**
 * The largest result a call keeps, as UTF-8 bytes of its JSON: a DynamoDB item holds 400 KB,
 * and the rest of the call (input, principal, keys) gets what is left. Text over it is cut
 * with a note; content blocks (an image, a file) are never cut: the call fails, naming sizes.
 */
export const MAX_RESULT_BYTES = 300_000;

/** What a finished call produced, stored with the call and carried by ToolResultReceived. */
export const callResult = z.object({
  status: z.enum(["succeeded", "failed"]),
  /** Text for a model to read. */
  output: z.string(),
  /** Structured output, valid against the tool's output schema. */
  data: z.unknown(),
  /**
   * The content blocks a tool's MCP server sent (text, images, audio, resources), kept as
   * they came; absent for tools whose answer is `output` and `data` alone.
   */
  content: z.array(contentBlock).optional(),
  citations: z.array(citation).default([]),
  failure: failure.optional(),
  cached: z.boolean().default(false),
  stale: z.boolean().default(false),
  durationMs: z.number().nonnegative(),
  resultBytes: z.number().int().nonnegative(),
  truncated: z.boolean().default(false),
  completedAt: z.string(),
  /** Set when the tool was unavailable and its fallback answered instead. */
  fallback: z.object({ from: z.string(), to: z.string(), reason: z.string() }).optional(),
});
export type CallResult = z.infer<typeof callResult>;

/** A call's approval: asked for, decided once (by whom, when, why), or expired. */
export const approval = z.object({
  requestedAt: z.string(),
  expiresAt: z.string(),
  decision: z
    .object({
      approved: z.boolean(),
      by: principal.optional(),
      at: z.string(),
      reason: z.string().max(1000).optional(),
    })
    .optional(),
});
export type Approval = z.infer<typeof approval>;

/**
 * Whether the tool's fallback may answer this call for its caller, as selection judged it when
 * the call was accepted (disabled, mode, role; see SelectionService.fallbackAccess). The
 * runtime obeys it without judging again: absent (a call recorded before this, or for a tool
 * without a fallback) means the fallback may not answer.
 */
export const fallbackAccess = z.object({
  /** The fallback judged: the tool's `fallback` when the call was accepted. */
  tool: toolId,
  allowed: z.boolean(),
  /** Why it may not answer for this caller (selection's reasons); empty when allowed. */
  reasons: z.array(z.string()).default([]),
});
export type FallbackAccess = z.infer<typeof fallbackAccess>;

export const callRecord = z.object({
  parentRunId: runId,
  callId,
  toolId,
  toolset: toolsetName,
  toolVersion: z.string(),
  /** builtin, http or mcp: carried by ToolCallScheduled so the bus routes it. */
  implementation: z.enum(["builtin", "http", "mcp"]).optional(),
  input: z.unknown(),
  /** sha256 of the canonical JSON input: a retried POST with the same id must match it. */
  inputHash: z.string(),
  status: callStatus,
  mode: z.string().optional(),
  requestedBy: principal,
  parentCallId: callId.optional(),
  scheduledAt: z.string(),
  startedAt: z.string().optional(),
  /** Past this a RUNNING call is stuck (the handler died) and may be failed by a sweeper. */
  deadlineAt: z.string().optional(),
  /** "direct" while the dispatcher holds the claim for a call handed straight to its handler. */
  dispatch: z.literal("direct").optional(),
  result: callResult.optional(),
  trace: traceContext.optional(),
  /** What the run had left once this call was counted, by the limits its policy sets. */
  budget: runBudget.optional(),
  /** Set on a call to a tool with a fallback: whether that fallback may answer for the caller. */
  fallbackAccess: fallbackAccess.optional(),
  /** Set on a call that needs a person's approval: until when, and once decided, the decision. */
  approval: approval.optional(),
  /**
   * Set once the run's log holds ToolResultReceived (the recorder sets it): until then the call
   * is on the outbox index, and a redelivery or the sweeper announces its result again.
   */
  resultPublishedAt: z.string().optional(),
  /** Where the call's events sit in its run's log, once logged: each is logged only once. */
  scheduledLogSeq: z.number().int().positive().optional(),
  resultLogSeq: z.number().int().positive().optional(),
  approvalLogSeq: z.number().int().positive().optional(),
  /**
   * The last ToolCallProgress step in the run's log: a step at or below it is not logged again
   * (a redelivery, or a step overtaken by a later one), nor is any step once the result is.
   */
  progressLogStep: z.number().int().positive().optional(),
  /** The latest progress step in the run's log (set with `progressLogStep`). */
  progress: z
    .object({
      progress: z.number(),
      total: z.number().optional(),
      message: z.string().optional(),
      reportedAt: z.string(),
    })
    .optional(),
  /**
   * When someone asked the running call to stop: its handler, wherever it runs, watches for
   * this and aborts the tool. The call then ends `cancelled`, unless it finished first.
   */
  cancelRequestedAt: z.string().optional(),
});
export type CallRecord = z.infer<typeof callRecord>;
