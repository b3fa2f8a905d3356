import * as z from "zod";
import { MAX_PROGRESS_MESSAGE, traceContext } from "./call";
import { callId, runId, toolId, toolsetName } from "./ids";

/*
 * Its own module (events.ts re-exports it): a tool's function announces progress but never
 * parses it, and its bundle leaves out a module none of its code uses.
 */

/**
 * A running call reported progress (a built-in tool through its context, a registered MCP
 * server through its progress notifications). Throttled per call: a step may be merged into a
 * later one, and none is announced after the call's result. Best effort: a step can be lost.
 */
export const toolCallProgress = z.object({
  /** `<run>/<call>/progress/<step>`: steps count up within the call. */
  eventKey: z.string().min(1),
  parentRunId: runId,
  callId,
  toolId,
  toolset: toolsetName,
  /** How far the call is, in the tool's own units; grows with each step. */
  progress: z.number(),
  /** What `progress` counts up to, when the tool knows. */
  total: z.number().optional(),
  message: z.string().max(MAX_PROGRESS_MESSAGE).optional(),
  reportedAt: z.string(),
  trace: traceContext.optional(),
});
export type ToolCallProgress = z.infer<typeof toolCallProgress>;
