import * as z from "zod";

const dependencyState = z.object({
  status: z.enum(["ok", "unavailable"]),
  latencyMs: z.number(),
  reason: z.string().optional(),
});

/** `GET /health`: whether the API and each dependency answer now (503 when one does not). */
export const healthView = z
  .object({
    status: z.enum(["ok", "unavailable"]),
    stage: z.string(),
    /** Each dependency's state: `dynamodb`, `eventbridge`. */
    dependencies: z.record(z.string(), dependencyState).optional(),
    checkedAt: z.string().optional(),
    /** Where event streams and MCP are served, when not at this URL (the stage's StreamUrl). */
    streamUrl: z.string().optional(),
  })
  .meta({ id: "Health" });
