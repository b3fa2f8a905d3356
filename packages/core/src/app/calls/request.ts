import { callId, toolId } from "@toolbus/wire/model/ids";
import { runPolicy } from "@toolbus/wire/model/run";
import * as z from "zod";

/** The body of `POST /v1/runs/{runId}/calls`. */
export const callRequest = z
  .object({
    tool: toolId,
    input: z.unknown().default({}),
    callId: callId.optional(),
    mode: z.string().min(1).max(64).optional(),
    /** Seconds to wait for the result; capped by the stage configuration. */
    wait: z.number().min(0).max(60).optional(),
    parentCallId: callId.optional(),
    /** The run's own limits, set once by its first call (or PUT /v1/runs/{runId}/policy). */
    policy: runPolicy.optional(),
  })
  .strict();
export type CallRequest = z.infer<typeof callRequest>;
