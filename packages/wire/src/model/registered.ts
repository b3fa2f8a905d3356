import * as z from "zod";
import { toolsetName } from "./ids";
import { HTTP_METHODS, secretHeader } from "./implementation";
import { cachePolicy, rateLimit, toolPolicyFields } from "./policy";
import { label, prose } from "./text";
import { availability, category, guidelines, taskSupport, toolSpec, toolUpdates } from "./tool";

export { type ToolUpdates, toolUpdates } from "./tool";

/**
 * One DynamoDB transaction (at most 100 items) writes a toolset with its tools and its held
 * review; keep a toolset inside one.
 */
export const MAX_REGISTERED_TOOLS = 98;

const owner = label(120);
const description = prose(1000);
const https = z
  .string()
  .max(2048)
  .regex(/^https?:\/\//i, "an http(s) URL");

/** One tool of an `http` toolset: the catalog fields of any tool, plus how to call it. */
const httpToolRegistration = toolSpec
  .pick({
    id: true,
    title: true,
    description: true,
    category: true,
    optionality: true,
    usageHint: true,
    guidelines: true,
    produces: true,
    examples: true,
    cache: true,
    rateLimit: true,
    timeoutMs: true,
    cost: true,
  })
  .extend({
    /**
     * Who may use the tool. Absent: a tool new to the catalog is offered to the stage's
     * highest role only (admins) until an administrator widens it; a tool already registered
     * keeps what it has.
     */
    availability: availability.optional(),
    method: z.enum(HTTP_METHODS).default("GET"),
    /**
     * An absolute URL; `{name}` placeholders in the path and in query values are filled from
     * the input field of that name. Fields the template does not use go in the query (GET,
     * DELETE) or in the JSON body (POST, PUT, PATCH).
     */
    url: https,
    inputSchema: z.record(z.string(), z.unknown()),
    /** What a 2xx body must match; absent = anything. */
    outputSchema: z.record(z.string(), z.unknown()).default({}),
    /** Absent: judged from the method (GET reads; PUT and DELETE are idempotent writes). */
    annotations: z
      .object({ readOnly: z.boolean(), openWorld: z.boolean(), idempotent: z.boolean() })
      .optional(),
    /** Overrides the toolset's auth header for this tool. */
    auth: secretHeader.optional(),
    version: z.string().min(1).max(64).optional(),
  })
  .strict();

export const httpToolsetRegistration = z
  .object({
    kind: z.literal("http"),
    name: toolsetName,
    description,
    owner,
    /** Sent with every tool's request unless the tool names its own. */
    auth: secretHeader.optional(),
    tools: z.array(httpToolRegistration).min(1).max(MAX_REGISTERED_TOOLS),
  })
  .strict();
export type HttpToolsetRegistration = z.infer<typeof httpToolsetRegistration>;

/** Catalog fields a remote MCP server does not describe: applied to each discovered tool. */
export const mcpToolDefaults = z
  .object({
    category: category.default("utility"),
    usageHint: prose(500).optional(),
    guidelines: guidelines.optional(),
    timeoutMs: z.number().int().min(100).max(900_000).default(30_000),
    /** What one call of each discovered tool costs against a run's `maxCost`. */
    cost: toolPolicyFields.cost.optional(),
    cache: cachePolicy.optional(),
    rateLimit: rateLimit.optional(),
    /**
     * Who may use every discovered tool. Absent: tools new to the catalog are offered to the
     * stage's highest role only (admins) until an administrator widens them; tools already
     * registered keep what they have.
     */
    availability: availability.optional(),
    /**
     * Remote tool name -> whether it may, must or may not run as an MCP task. A server does
     * not say (the tasks extension has no per-tool declaration), so this is where a tool that
     * only makes sense as a task says `required`, and one that must answer at once `forbidden`;
     * any other follows its timeout (core's `taskSupportOf`).
     */
    taskSupport: z.record(z.string().min(1).max(256), taskSupport).optional(),
  })
  .strict();

export const mcpToolsetRegistration = z
  .object({
    kind: z.literal("mcp"),
    name: toolsetName,
    description,
    owner,
    /** The server's Streamable HTTP endpoint. */
    url: https,
    auth: secretHeader.optional(),
    /**
     * Remote tool name -> id here. A remote name is otherwise snake_cased into the id; a rename
     * is how two servers' `search` tools live side by side.
     */
    renames: z.record(z.string().min(1).max(128), toolSpec.shape.id).default({}),
    defaults: mcpToolDefaults.default({ category: "utility", timeoutMs: 30_000 }),
    /**
     * What a refresh does when the server's tools changed. "review" (the default): the
     * definitions pinned at registration keep being served and the change is held until an
     * administrator accepts it. "follow": the change is served at once.
     */
    updates: toolUpdates.default("review"),
  })
  .strict();
export type McpToolsetRegistration = z.infer<typeof mcpToolsetRegistration>;

export const toolsetRegistration = z.discriminatedUnion("kind", [
  httpToolsetRegistration,
  mcpToolsetRegistration,
]);
export type ToolsetRegistration = z.infer<typeof toolsetRegistration>;

/** What a registration or refresh changed, by tool id. */
export const catalogDiff = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  unchanged: z.array(z.string()),
});
export type CatalogDiff = z.infer<typeof catalogDiff>;

/**
 * One change a refresh found in a server's tools and held for review: a tool the server added,
 * removed, or declares differently from its pinned definition. Tools are matched by the
 * server's own name, so a renamed tool is one removed and one added.
 */
export const heldToolChange = z.object({
  remoteName: z.string().min(1).max(256),
  change: z.enum(["added", "changed", "removed"]),
  /** The server's declaration as it listed it (added and changed tools). */
  declared: z.record(z.string(), z.unknown()).optional(),
  /** Identifies the held definition: the same change found again is not held anew. */
  fingerprint: z.string().min(1).max(64),
  detectedAt: z.string(),
  /** Rejected: kept so that the same change is not held again; a different one is. */
  state: z.enum(["pending", "rejected"]),
});
export type HeldToolChange = z.infer<typeof heldToolChange>;

/** What is held for review on a registered MCP toolset, with the generations its server speaks. */
export const heldReview = z.object({
  changes: z.array(heldToolChange).max(2 * MAX_REGISTERED_TOOLS),
  protocols: z.array(z.string()).max(8),
});
export type HeldReview = z.infer<typeof heldReview>;

/** Registrations as a caller writes them (defaults may be left out): the typed client's input. */
export type SecretHeaderInput = z.input<typeof secretHeader>;
export type HttpToolRegistrationInput = z.input<typeof httpToolRegistration>;
export type HttpToolsetRegistrationInput = z.input<typeof httpToolsetRegistration>;
export type McpToolDefaultsInput = z.input<typeof mcpToolDefaults>;
export type McpToolsetRegistrationInput = z.input<typeof mcpToolsetRegistration>;
export type ToolsetRegistrationInput = z.input<typeof toolsetRegistration>;
