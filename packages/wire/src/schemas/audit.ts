import * as z from "zod";
import { auditEntry } from "../model/audit";

export const auditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

/** Admin writes, newest first; `cursor` reads the next page, null at the end. */
export const auditPageView = z
  .object({ entries: z.array(auditEntry), cursor: z.string().nullable() })
  .meta({ id: "AuditPage" });
