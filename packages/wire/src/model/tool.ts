import * as z from "zod";
import { providerName, toolId, toolsetName } from "./ids";
import { implementation, secretHeader } from "./implementation";
import { toolPolicyFields } from "./policy";
import { label, prose } from "./text";

export const CATEGORIES = ["research", "reference", "enhance", "publish", "utility"] as const;
export const category = z.enum(CATEGORIES);
export type Category = z.infer<typeof category>;

/** A JSON Schema document, as tools publish their input and output on the wire. */
export const jsonSchema = z.record(z.string(), z.unknown());

export const guidelines = z.object({
  do: z.array(z.string().min(1)).default([]),
  dont: z.array(z.string().min(1)).default([]),
});

const setupField = z.object({
  name: z.string().min(1),
  description: z.string().min(1),
  env: z.string().optional(),
  secret: z.string().optional(),
  required: z.boolean().default(false),
});

export const availability = z.object({
  enabled: z.boolean().default(true),
  /** Workflow modes the tool is offered in; absent = every mode. */
  modes: z.array(z.string().min(1)).optional(),
  /** Lowest role that may see and call it; absent = every role. */
  minRole: z.string().min(1).optional(),
});

/** MCP's `execution.taskSupport`: how a tool may be run as a task. */
export const taskSupport = z.enum(["forbidden", "optional", "required"]);
export type TaskSupport = z.infer<typeof taskSupport>;

/**
 * Whose account a tool acts with at an upstream provider. `stage`: the stage's own secret
 * (`secret`, checked by `capability`); `user`: each caller's connected account at `provider`,
 * asking `scopes`. A built-in tool declares the provider it can act as the user with; the
 * stage configuration (`connections.credentials`) chooses which.
 */
export const toolCredentials = z.object({
  provider: providerName,
  scopes: z.array(z.string().min(1).max(200)).max(50).default([]),
  mode: z.enum(["stage", "user"]),
  /** The secret the tool reads the token from: the stage's, or, in `user` mode, the caller's in its place. */
  secret: z.string().min(1).max(64).optional(),
  /** The capability that checks the stage's secret; not required of a tool acting as the user. */
  capability: z.string().min(1).max(64).optional(),
});
export type ToolCredentials = z.infer<typeof toolCredentials>;

/** Everything about a tool but its code: what the catalog stores and every consumer reads. */
export const toolSpec = z.object({
  id: toolPolicyFields.id,
  toolset: toolsetName,
  title: label(120),
  description: prose(2000),
  category,
  optionality: z.enum(["optional", "core"]).default("optional"),
  usageHint: prose(500),
  guidelines: guidelines.default({ do: [], dont: [] }),
  requires: toolPolicyFields.requires,
  produces: z.array(z.string().min(1)).default([]),
  inputSchema: jsonSchema,
  /** Absent for a registered MCP tool whose server declares none: it answers in content. */
  outputSchema: jsonSchema.optional(),
  examples: z.array(z.object({ title: z.string().min(1), input: z.unknown() })).default([]),
  cache: toolPolicyFields.cache,
  rateLimit: toolPolicyFields.rateLimit,
  timeoutMs: toolPolicyFields.timeoutMs,
  annotations: z
    .object({ readOnly: z.boolean(), openWorld: z.boolean(), idempotent: z.boolean() })
    .default({ readOnly: true, openWorld: false, idempotent: true }),
  setup: z.array(setupField).default([]),
  /** Names the fallback tool used when this one is unavailable. */
  fallback: toolPolicyFields.fallback,
  version: toolPolicyFields.version,
  cost: toolPolicyFields.cost,
  availability: availability.default({ enabled: true }),
  implementation: implementation.default({ kind: "builtin" }),
  /**
   * Whether an MCP caller may (`optional`) or must (`required`) run it as a task, or may not
   * (`forbidden`). Absent: judged from its timeout (app/calls/tasks.ts).
   */
  taskSupport: taskSupport.optional(),
  /** Whose upstream account it acts with (connected accounts); absent: the stage's secrets only. */
  credentials: toolCredentials.optional(),
});
export type ToolSpec = z.infer<typeof toolSpec>;
export type ToolSpecInput = z.input<typeof toolSpec>;

/**
 * How a registered MCP server's changed tool definitions reach the catalog: "review" holds
 * them until an administrator accepts; "follow" serves them at once.
 */
export const toolUpdates = z.enum(["review", "follow"]);
export type ToolUpdates = z.infer<typeof toolUpdates>;

export const toolsetSpec = z.object({
  name: toolsetName,
  description: prose(1000),
  /** The provider that implements it: ownership decides who may change it. */
  owner: label(120),
  kind: z.enum(["builtin", "http", "mcp"]).default("builtin"),
  /** Where a registered MCP toolset's tools come from: what a refresh asks again. */
  source: z
    .object({
      url: z.string().min(1).max(2048),
      auth: secretHeader.optional(),
      /** Remote tool name -> the id it has here. */
      renames: z.record(z.string(), toolId).default({}),
      /** The registration's defaults for discovered tools (checked again on refresh). */
      defaults: z.record(z.string(), z.unknown()).optional(),
      /** Absent: "review", what registrations before the option had. */
      updates: toolUpdates.optional(),
    })
    .optional(),
});
export type ToolsetSpec = z.infer<typeof toolsetSpec>;
