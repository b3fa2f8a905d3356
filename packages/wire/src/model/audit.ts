import * as z from "zod";

/**
 * What an admin write can touch: the API's collections, and `other` for a path outside them.
 * A closed list, so a reader can group entries by it.
 */
const AUDIT_OBJECT_KINDS = [
  "key",
  "tool",
  "toolset",
  "capability",
  "subscription",
  "run",
  "connection",
  "other",
] as const;
export type AuditObjectKind = (typeof AUDIT_OBJECT_KINDS)[number];

/** At most this many ids in an entry's `object.touched`; `touchedCount` says how many in all. */
export const MAX_AUDIT_TOUCHED = 50;

/**
 * The object an admin write touched: names and ids only, never a secret or a body. Routes say
 * what they touched; a route that says nothing gets one derived from its path.
 */
const auditObject = z.object({
  kind: z.enum(AUDIT_OBJECT_KINDS),
  /** A key id, tool id or toolset name; `*` when a write touched the whole collection. */
  id: z.string(),
  /** A key's name. */
  name: z.string().optional(),
  /** A key's role. */
  role: z.string().optional(),
  /** A tool's toolset. */
  toolset: z.string().optional(),
  /** What a bulk write touched: a toolset's tools, the capabilities refreshed. */
  touched: z.array(z.string()).optional(),
  /** How many it touched in all, when that is more than `touched` lists. */
  touchedCount: z.number().int().optional(),
});
export type AuditObject = z.infer<typeof auditObject>;

/** One admin write: who (a key id, never the key), what, on which target, from which version to which. */
export const auditEntry = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.object({ keyId: z.string(), role: z.string() }),
  /** The request that changed something: `PUT /v1/tools/{id}`, `DELETE /v1/keys/{keyId}`, ... */
  action: z.string(),
  /** The path it changed. */
  target: z.string(),
  /**
   * What it changed. Entries written before this field (2026-11-26, with the first working AWS
   * deploy, so only in local tables kept on disk) have none. Audit entries have no TTL: make it
   * required after 2027-03-31, telling users that a state dir from before then is to be deleted.
   */
  object: auditObject.optional(),
  status: z.number().int(),
  /** The version the writer said it changed (`If-Match`), and the version it made (`ETag`). */
  before: z.string().optional(),
  after: z.string().optional(),
  requestId: z.string().optional(),
});
export type AuditEntry = z.infer<typeof auditEntry>;
