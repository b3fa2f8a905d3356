import {
  callResult,
  callStatus,
  capabilityStatus,
  category,
  delivery,
  principal,
  subscription,
  subscriptionTarget,
  toolCallApprovalRequested,
  toolCallScheduled,
  toolResultReceived,
  toolSpec,
  toolsetSpec,
} from "@toolbus/core/model";
import { z } from "zod";
import type {
  CapabilityStatus,
  Citation,
  Failure,
  Harness,
  Principal,
  ToolCallScheduled,
  ToolResultReceived,
  ToolSpec,
  ToolsetSpec,
} from "./generated/catalog-types.js";
import type { ToolFallback, ToolOutput } from "./tools.js";

// Response shapes, checked where it is cheap (calls, events, keys, capabilities, registered
// toolsets) with the model's own zod schemas. Objects are loose: a field the server adds later
// passes through instead of failing or disappearing.

export const errorBodySchema = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});

/** On a call that needs a person's approval: until when it waits, and the decision once made. */
const callApproval = z
  .object({
    requestedAt: z.string(),
    expiresAt: z.string(),
    decision: z
      .object({
        approved: z.boolean(),
        by: principal.optional(),
        at: z.string(),
        reason: z.string().optional(),
      })
      .loose()
      .optional(),
  })
  .loose();

export const callViewSchema = z
  .object({
    parentRunId: z.string(),
    callId: z.string(),
    toolId: z.string(),
    toolset: z.string(),
    status: callStatus,
    mode: z.string().optional(),
    parentCallId: z.string().optional(),
    requestedBy: principal,
    scheduledAt: z.string(),
    startedAt: z.string().optional(),
    approval: callApproval.optional(),
    result: callResult.omit({ status: true }).loose().optional(),
  })
  .loose()
  .refine(
    (call) => (call.status === "succeeded" || call.status === "failed") === Boolean(call.result),
    "A finished call has a result and an unfinished one has none.",
  )
  .refine(
    (call) => call.status !== "failed" || call.result?.failure !== undefined,
    "A failed call says why.",
  );

export const callAcceptedSchema = z
  .object({ callId: z.string(), status: callStatus, statusUrl: z.string() })
  .loose();

export const runEventSchema = z.discriminatedUnion("detailType", [
  z
    .object({
      eventKey: z.string(),
      detailType: z.literal("ToolCallScheduled"),
      occurredAt: z.string(),
      detail: toolCallScheduled.loose(),
    })
    .loose(),
  z
    .object({
      eventKey: z.string(),
      detailType: z.literal("ToolResultReceived"),
      occurredAt: z.string(),
      detail: toolResultReceived.loose(),
    })
    .loose(),
  z
    .object({
      eventKey: z.string(),
      detailType: z.literal("ToolCallApprovalRequested"),
      occurredAt: z.string(),
      detail: toolCallApprovalRequested.loose(),
    })
    .loose(),
]);

/** GET /v1/approvals: calls awaiting a person's decision. */
export const approvalsSchema = z.object({ calls: z.array(callViewSchema) }).loose();

export const eventsPageSchema = z.object({
  events: z.array(runEventSchema),
  cursor: z.string().nullable(),
});

/** GET /v1/events: a page of the stage's events; `more` says read again at once. */
export const stageEventsPageSchema = z
  .object({ events: z.array(runEventSchema), cursor: z.string(), more: z.boolean() })
  .loose();

export const keyRecordSchema = z
  .object({
    keyId: z.string(),
    name: z.string(),
    role: z.string(),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
    lastUsedAt: z.string().optional(),
  })
  .loose();
export const createdKeySchema = z
  .object({
    key: z.string(),
    keyId: z.string(),
    name: z.string(),
    role: z.string(),
    createdAt: z.string(),
  })
  .loose();
export const keyListSchema = z.object({ keys: z.array(keyRecordSchema) });

const metricDimensions = z.record(z.string(), z.string());

/** GET /v1/metrics: this process's counters (`npm start`), or where CloudWatch keeps them. */
export const metricsSchema = z
  .object({
    source: z.enum(["process", "cloudwatch"]),
    since: z.string().optional(),
    counters: z
      .array(z.object({ name: z.string(), dimensions: metricDimensions, value: z.number() }))
      .optional(),
    latencies: z
      .array(
        z
          .object({
            name: z.string(),
            dimensions: metricDimensions,
            count: z.number(),
            p50: z.number(),
            p90: z.number(),
            p99: z.number(),
            max: z.number(),
          })
          .loose(),
      )
      .optional(),
    cloudwatch: z.object({ namespace: z.string(), dimensions: metricDimensions }).optional(),
  })
  .loose();
export type Metrics = z.infer<typeof metricsSchema>;

export const capabilitiesSchema = z.object({
  capabilities: z.array(capabilityStatus.loose()),
});

const versioned = { revision: z.number().int(), updatedAt: z.string() };

// Catalog reads are checked too: the adapters hand a tool's description and input schema to a
// model, and a listing that is not what the API promises should fail here, not there.
export const toolSchema = toolSpec.extend(versioned).loose();
export const toolListSchema = z.object({
  tools: z.array(
    toolSchema.extend({ available: z.boolean(), reasons: z.array(z.string()).optional() }),
  ),
});
const toolsetSchema = toolsetSpec.extend(versioned).loose();
export const toolsetListSchema = z.object({ toolsets: z.array(toolsetSchema) });
export const toolsetDetailSchema = toolsetSchema.extend({ tools: z.array(toolSchema) });

/** What a registration or refresh changed, by tool id. */
export const catalogDiffSchema = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  unchanged: z.array(z.string()),
});
export const registrationOutcomeSchema = z
  .object({
    toolset: toolsetSchema,
    tools: z.array(toolSchema),
    diff: catalogDiffSchema,
  })
  .loose();
export const removedToolsetSchema = z.object({ removed: z.array(z.string()) }).loose();

// Subscriptions: core's own schemas, loose where the API may add fields later.

export const subscriptionTargetSchema = subscriptionTarget;
export const subscriptionSchema = subscription.loose();
export const subscriptionListSchema = z.object({ subscriptions: z.array(subscriptionSchema) });
export const subscriptionWithSecretSchema = z
  .object({ subscription: subscriptionSchema, secret: z.string() })
  .loose();
export const deliverySchema = delivery.loose();
export const failuresPageSchema = z
  .object({ failures: z.array(deliverySchema), cursor: z.string().nullable() })
  .loose();
export const redriveResultSchema = z.object({ redriven: z.number().int() }).loose();
export const replayResultSchema = z
  .object({
    replayId: z.string(),
    queued: z.number().int(),
    events: z.number().int(),
    /** False when the replay stopped at its limit of events read (replay the rest later). */
    complete: z.boolean().optional(),
  })
  .loose();

export const healthSchema = z
  .object({ status: z.literal("ok"), stage: z.string(), streamUrl: z.string().optional() })
  .loose();

/** A run's limits, as the API answers them (the API checks what is sent). */
const runPolicy = z.object({
  maxCalls: z.number().int().optional(),
  maxCallsPerTool: z.number().int().optional(),
  maxSeconds: z.number().int().optional(),
  maxCost: z.number().int().optional(),
  maxRepeats: z.number().int().optional(),
});
/** What a run has left, by the limits that apply. */
const runBudget = z.object({
  calls: z.number().int().optional(),
  cost: z.number().optional(),
  seconds: z.number().optional(),
});

export const runPoliciesSchema = z
  .object({
    /** What the run works under: the tighter of the stage's and its own, limit by limit. */
    policy: runPolicy,
    runPolicy: runPolicy.nullable(),
    stagePolicy: runPolicy,
  })
  .loose();
export type RunPolicies = z.infer<typeof runPoliciesSchema>;
/** A run's limits: most calls, calls per tool, seconds, cost, and repeats of one input. */
export type RunPolicy = z.infer<typeof runPolicy>;

export const runSchema = runPoliciesSchema
  .extend({
    runId: z.string(),
    usage: z.object({
      calls: z.number().int(),
      cost: z.number(),
      firstCallAt: z.string().nullable(),
      perTool: z.record(z.string(), z.number().int()),
    }),
    remaining: runBudget,
    calls: z.record(z.string(), z.number().int()),
  })
  .loose();
export type Run = z.infer<typeof runSchema>;

export const toolSearchSchema = z
  .object({
    query: z.string(),
    mode: z.string(),
    role: z.string(),
    catalogVersion: z.string(),
    tools: z.array(
      z
        .object({
          id: z.string(),
          title: z.string(),
          toolset: z.string(),
          category,
          description: z.string(),
          usageHint: z.string(),
          inputSchema: z.record(z.string(), z.unknown()),
          score: z.number(),
          matched: z.array(z.string()),
        })
        .loose(),
    ),
  })
  .loose();
export type ToolSearch = z.infer<typeof toolSearchSchema>;

export const selectionSchema = z
  .object({
    mode: z.string(),
    role: z.string(),
    tools: z.array(z.string()),
    excluded: z.array(z.object({ tool: z.string(), reasons: z.array(z.string()) })),
  })
  .loose();

export const promptSchema = z
  .object({
    markdown: z.string(),
    tools: z.array(
      z
        .object({
          id: z.string(),
          title: z.string(),
          category,
          description: z.string(),
          whenToUse: z.string(),
          guidelines: z.object({ do: z.array(z.string()), dont: z.array(z.string()) }),
          examples: z.array(z.object({ title: z.string(), input: z.unknown() })),
        })
        .loose(),
    ),
    dropped: z.object({ guidelines: z.array(z.string()), examples: z.array(z.string()) }),
    bytes: z.number().int(),
    overBudget: z.boolean(),
  })
  .loose();

const renderedFileSchema = z
  .object({
    harness: z.string(),
    path: z.string(),
    content: z.string(),
    warnings: z.array(z.string()),
  })
  .loose();
export const renderedSchema = z.union([
  z.object({ files: z.array(renderedFileSchema) }).loose(),
  renderedFileSchema,
]);

// ---------------------------------------------------------------------------------------------
// Types callers see.

export type { CapabilityStatus, Citation, Failure, Principal, ToolSpec, ToolsetSpec };

/** A catalog tool as stored: its spec plus the revision every write increments. */
export type Tool = ToolSpec & { revision: number; updatedAt: string };
/** A tool in a listing: whether it is in your selection for the mode, and if not, why. */
export type ToolListItem = Tool & { available: boolean; reasons?: string[] };
export type Toolset = ToolsetSpec & { revision: number; updatedAt: string };
export type ToolsetWithTools = Toolset & { tools: Tool[] };

export type CallStatus = "pending" | "running" | "succeeded" | "failed";

/** Set when the tool was unavailable and its fallback answered instead. */
export interface FallbackInfo<From extends string = string, To extends string = string> {
  from: From;
  to: To;
  reason: string;
}

interface ResultFields {
  /** Text for a model to read. */
  output: string;
  citations: Citation[];
  cached: boolean;
  stale: boolean;
  durationMs: number;
  resultBytes: number;
  truncated: boolean;
  completedAt: string;
}

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

/** A call's approval: when it was asked for, until when it waits, and the decision once made. */
export interface CallApproval {
  requestedAt: string;
  expiresAt: string;
  decision?: { approved: boolean; by?: Principal; at: string; reason?: string };
}

interface CallFields {
  parentRunId: string;
  callId: string;
  toolId: string;
  toolset: string;
  mode?: string;
  parentCallId?: string;
  requestedBy: Principal;
  scheduledAt: string;
  startedAt?: string;
  /** Set on a call that needs a person's approval (the stage's `approvals` rules). */
  approval?: CallApproval;
}

/** A call as the API shows it; narrow on `status` to reach a typed `result`. */
export type CallView<T extends string = string> = CallFields &
  (
    | { status: "succeeded"; result: SucceededResult<T> }
    | { status: "failed"; result: FailedResult }
    | { status: "pending" | "running"; result?: undefined }
  );

/** One entry of a run's event log, with the detail typed by its detail type. */
export type RunEvent =
  | {
      eventKey: string;
      detailType: "ToolCallScheduled";
      occurredAt: string;
      detail: ToolCallScheduled;
    }
  | {
      eventKey: string;
      detailType: "ToolResultReceived";
      occurredAt: string;
      detail: ToolResultReceived;
    }
  | {
      eventKey: string;
      detailType: "ToolCallApprovalRequested";
      occurredAt: string;
      detail: ToolCallApprovalRequested;
    };

/** A call waits for a person's approval: the scheduling's fields, until when, where to decide. */
export type ToolCallApprovalRequested = ToolCallScheduled & {
  approval: { expiresAt: string; decideUrl: string };
};

/**
 * A page of the stage's events. It may be empty while a pattern skips what it does not match:
 * `more` then says events are recorded past `cursor`, to read again at once.
 */
export interface StageEventsPage {
  events: RunEvent[];
  /** Read on from here; present even when the page is empty. */
  cursor: string;
  more: boolean;
}

/** Where a subscription's deliveries go: a webhook, an EventBridge bus or an SQS queue. */
export type SubscriptionTarget = z.infer<typeof subscriptionTargetSchema>;
export type Subscription = z.infer<typeof subscriptionSchema>;
/** A new subscription, or one whose secret was rotated, with the signing secret shown once. */
export type SubscriptionWithSecret = z.infer<typeof subscriptionWithSecretSchema>;
/** One event on its way to one subscription; a dead letter has `status: "dead"`. */
export type Delivery = z.infer<typeof deliverySchema>;
/** A page of dead letters, newest first; `cursor` reads the next page, null at the end. */
export type FailuresPage = z.infer<typeof failuresPageSchema>;
/** A replay's id, how many of the run's logged events it queued, and how many it looked at. */
export type ReplayResult = z.infer<typeof replayResultSchema>;

/** What `POST /v1/subscriptions` takes. */
export interface SubscriptionRequest {
  name: string;
  /** An EventBridge event pattern over Toolbus's events: an object or its JSON text. */
  pattern: Record<string, unknown> | string;
  target:
    | { kind: "webhook"; url: string }
    | { kind: "eventbridge"; busArn: string }
    | { kind: "sqs"; queueUrl: string };
}

export type ApiKeyRecord = z.infer<typeof keyRecordSchema>;
export type CreatedApiKey = z.infer<typeof createdKeySchema>;
export type Selection = z.infer<typeof selectionSchema>;
export type Health = z.infer<typeof healthSchema>;
export type CatalogDiff = z.infer<typeof catalogDiffSchema>;

/** What a registration or a refresh stored: the toolset, exactly its tools, and the diff. */
export interface RegistrationOutcome {
  toolset: Toolset;
  tools: Tool[];
  diff: CatalogDiff;
}
/** A registration's outcome; `created` is false when it replaced a toolset of that name. */
export type ToolsetRegistered = RegistrationOutcome & { created: boolean };
/** The ids of the tools that left the catalog with the toolset. */
export type ToolsetRemoved = z.infer<typeof removedToolsetSchema>;

export interface RenderedAgentFile {
  harness: Harness;
  /** Where the harness reads it, relative to a project's root. */
  path: string;
  content: string;
  /** What was dropped or adjusted (a tool the harness lacks, ...). */
  warnings: string[];
  /**
   * Where the harness reads MCP servers from, when not from the agent file (`.mcp.json`,
   * `opencode.json`): the agent's servers under `key`, to merge into that file.
   */
  mcpServersFile?: { path: string; key: string; content: string };
}
