import * as z from "zod";

/** One admin write: who (a key id, never the key), what, on which target, from which version to which. */
export const auditEntry = z.object({
  id: z.string(),
  at: z.string(),
  actor: z.object({ keyId: z.string(), role: z.string() }),
  /** The request that changed something: `PUT /v1/tools/{id}`, `DELETE /v1/keys/{keyId}`, ... */
  action: z.string(),
  /** The path it changed. */
  target: z.string(),
  status: z.number().int(),
  /** The version the writer said it changed (`If-Match`), and the version it made (`ETag`). */
  before: z.string().optional(),
  after: z.string().optional(),
  requestId: z.string().optional(),
});
export type AuditEntry = z.infer<typeof auditEntry>;
