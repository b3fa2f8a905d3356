import { z } from "@hono/zod-openapi";
import { callRequest } from "../app/calls/request";
import { approval, callResult, callStatus, principal } from "../model/call";
import { runEvent } from "../model/events";
import { callId, runId, toolId, toolsetName } from "../model/ids";
import { catalogDiff, toolsetRegistration } from "../model/registered";
import { runBudget } from "../model/run";
import { label } from "../model/text";
import { category, toolSpec, toolsetSpec } from "../model/tool";

// The wire shapes of the API, built from the model's own zod schemas so /openapi.json
// cannot drift from what the handlers validate.

const errorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: "invalid_request" }),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  })
  .openapi("Error");

// The model's schemas are created before @hono/zod-openapi patches zod, so they have no
// `.openapi()`; zod's own `.meta()` carries the same metadata (`id` names a component).
export const runIdParam = runId.meta({ example: "run-42" });
export const callIdParam = callId.meta({ example: "call-1" });
export const toolIdParam = toolId.meta({ example: "readability_analyzer" });
export const toolsetNameParam = toolsetName.meta({ example: "text" });
/** Ids the key store issues or accepts. */
export const keyIdParam = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "1-64 letters, digits, . _ or -")
  .openapi({ example: "0123456789abcdef" });

export const ifMatchHeaders = z.object({
  "if-match": z.string().max(64).optional().openapi({
    description: 'The revision you read (ETag), e.g. "3": the write fails with 409 if it moved on.',
  }),
});

const versionedFields = {
  revision: z.number().int().positive().openapi({ description: "Incremented on every write." }),
  updatedAt: z.string(),
};

export const toolSchema = toolSpec.extend(versionedFields).openapi("Tool");
export const toolListItemSchema = toolSchema
  .extend({
    available: z.boolean().openapi({
      description:
        "In your selection for the requested (or default) mode: enabled, offered in the mode, open to your role, and its capabilities present, or only capabilities missing and its fallback able to serve (`servedBy`).",
    }),
    reasons: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          "When not available, why: disabled, mode, role, capability:<name>. When served by its fallback, the capabilities it lacks.",
        example: ["capability:github_token"],
      }),
    servedBy: z.string().optional().openapi({
      description:
        "Set when the tool lacks capabilities but is available because its fallback (this tool) answers its calls.",
      example: "static_links",
    }),
    fallbackReasons: z
      .array(z.string())
      .optional()
      .openapi({
        description:
          "Set when the tool lacks only capabilities and its fallback cannot serve either: why not (capability:<fallback> when it has nothing to serve on this stage).",
        example: ["capability:static_links"],
      }),
  })
  .openapi("ToolListItem");
/**
 * A write takes the spec and nothing unknown. The revision and time a read returned may come
 * back in a read-modify-write and are ignored: If-Match is what carries the revision.
 */
const readBack = {
  revision: z.number().optional().openapi({ description: "Ignored; send If-Match instead." }),
  updatedAt: z.string().optional().openapi({ description: "Ignored." }),
};
export const toolInputSchema = toolSpec.extend(readBack).strict().meta({ id: "ToolInput" });
export const toolsetSchema = toolsetSpec.extend(versionedFields).openapi("Toolset");
export const toolsetInputSchema = toolsetSpec
  .extend(readBack)
  .strict()
  .meta({ id: "ToolsetInput" });
export const toolsetDetailSchema = toolsetSchema
  .extend({ tools: z.array(toolSchema) })
  .openapi("ToolsetWithTools");

/** More ids than any catalog holds: a bound on the work one request can ask for. */
const MAX_LIST = 1000;

/** What every selecting request may say: the mode, the role, and allow / deny lists. */
export const selectionFields = {
  mode: z.string().min(1).max(64).nullable().optional().openapi({
    description: "Workflow mode; absent or null means the stage's default mode.",
  }),
  role: z.string().min(1).max(64).optional().openapi({
    description: "Select as this role (default: your own). It may not be above your own role.",
  }),
  allow: z.array(toolId).max(MAX_LIST).optional().openapi({
    description: "Only these tool ids may be selected.",
  }),
  deny: z.array(toolId).max(MAX_LIST).optional().openapi({
    description: "These tool ids are never selected.",
  }),
};

export const toolsQuery = z.object({
  category: category.optional(),
  toolset: toolsetName.optional(),
  mode: z.string().min(1).max(64).optional(),
  available: z.enum(["true", "false"]).optional(),
});

export const callViewSchema = z
  .object({
    parentRunId: runId,
    callId,
    toolId,
    toolset: toolsetName,
    status: callStatus,
    mode: z.string().optional(),
    parentCallId: callId.optional(),
    requestedBy: principal,
    scheduledAt: z.string(),
    startedAt: z.string().optional(),
    /** The W3C trace the call was made under: GET /v1/traces/{traceId} lists its calls. */
    traceId: z.string().optional(),
    /** What the run had left once this call was counted (the limits its policy sets). */
    budget: runBudget.optional(),
    /** On a call that needs a person's approval: until when it waits, and the decision once made. */
    approval: approval.optional(),
    result: callResult.omit({ status: true }).optional(),
  })
  .openapi("Call");

export const callAcceptedSchema = z
  .object({
    callId,
    status: callStatus,
    statusUrl: z.string().openapi({ example: "/v1/runs/run-42/calls/call-1" }),
  })
  .openapi("CallAccepted");

const runEventSchema = runEvent.meta({ id: "RunEvent" });
export const eventsQuery = z.object({
  cursor: z.string().min(1).max(2048).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});
export const eventsPageSchema = z
  .object({
    events: z.array(runEventSchema),
    cursor: z.string().nullable().openapi({ description: "Pass back to read on from here." }),
  })
  .openapi("RunEventPage");

export const stageEventsQuery = z.object({
  pattern: z.string().min(2).max(16_384).optional().openapi({
    description: "An EventBridge event pattern, as JSON",
    example: '{"detail":{"status":["failed"]}}',
  }),
  cursor: z.string().min(1).max(2048).optional(),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: "Start at the first event recorded at or after this time" }),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});
export const stageEventsPageSchema = z
  .object({
    events: z.array(runEventSchema),
    cursor: z.string().openapi({ description: "Pass back to read on from here." }),
    more: z
      .boolean()
      .openapi({ description: "Events are recorded past the cursor: read again at once." }),
  })
  .openapi("StageEventPage");

export const keyRecordSchema = z
  .object({
    keyId: z.string(),
    name: z.string(),
    role: z.string(),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
    lastUsedAt: z.string().optional(),
  })
  .openapi("ApiKey");
export const createKeySchema = z
  .object({ name: label(120), role: z.string().min(1).max(64) })
  .strict()
  .openapi("ApiKeyInput");
export const createdKeySchema = z
  .object({
    key: z.string().openapi({ description: "Shown once; only its hash is stored." }),
    keyId: z.string(),
    name: z.string(),
    role: z.string(),
    createdAt: z.string(),
  })
  .openapi("ApiKeyCreated");

export const callRequestSchema = callRequest.meta({ id: "CallRequest" });

const dependencyStateSchema = z.object({
  status: z.enum(["ok", "unavailable"]),
  latencyMs: z.number(),
  reason: z.string().optional(),
});

export const healthSchema = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    stage: z.string(),
    /** Each dependency's state: `dynamodb`, `eventbridge`. */
    dependencies: z.record(z.string(), dependencyStateSchema).optional(),
    checkedAt: z.string().optional(),
    /** Where event streams and MCP are served, when not at this URL (the stage's StreamUrl). */
    streamUrl: z.string().optional(),
  })
  .openapi("Health");

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid request (details list each failing path)",
  401: "Missing, unknown or revoked API key",
  403: "The key's role is too low",
  404: "Not found",
  409: "Conflict",
  413: "Body over 256 KB",
  415: "Body is not JSON",
  503: "A dependency is unavailable; retry later",
};

/** The error responses a route can give, all in the one error shape. */
export function errorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: ERROR_DESCRIPTIONS[status] ?? "Error",
        content: { "application/json": { schema: errorSchema } },
      },
    ]),
  ) as Record<
    S,
    { description: string; content: { "application/json": { schema: typeof errorSchema } } }
  >;
}

export const bearerSecurity = [{ bearerAuth: [] }];

export function jsonContent<T>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export const toolsetRegistrationSchema = toolsetRegistration.meta({
  id: "ExternalToolsetRegistration",
  description:
    "An http toolset (its tools, each a method and URL template with JSON Schemas) or an mcp toolset (a remote MCP server whose tools are discovered). Secrets are named, never given.",
});
export const registrationOutcomeSchema = z
  .object({
    toolset: toolsetSchema,
    tools: z.array(toolSchema),
    diff: catalogDiff.meta({ id: "CatalogDiff" }),
  })
  .openapi("RegistrationOutcome");
export const refreshRequestSchema = z
  .object({
    renames: z
      .record(z.string().min(1).max(128), toolId)
      .optional()
      .openapi({ description: "Remote tool name -> id here, merged into the stored renames." }),
  })
  .strict()
  .openapi("RefreshRequest");
