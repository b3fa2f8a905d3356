import * as z from "zod";
import { EVENT_SCHEMAS, runEvent } from "../model/events";

export const runEventView = runEvent.meta({ id: "RunEvent" });

/**
 * A run event with its detail checked against its detail type's own schema: what a reader
 * that acts on details (the typed client) parses with. The API documents the envelope only.
 */
export const typedRunEvent = z.discriminatedUnion("detailType", [
  runEvent.extend({
    detailType: z.literal("ToolCallScheduled"),
    detail: EVENT_SCHEMAS.ToolCallScheduled,
  }),
  runEvent.extend({
    detailType: z.literal("ToolResultReceived"),
    detail: EVENT_SCHEMAS.ToolResultReceived,
  }),
  runEvent.extend({
    detailType: z.literal("ToolCallApprovalRequested"),
    detail: EVENT_SCHEMAS.ToolCallApprovalRequested,
  }),
  runEvent.extend({
    detailType: z.literal("ToolCallProgress"),
    detail: EVENT_SCHEMAS.ToolCallProgress,
  }),
]);

export const runEventsQuery = z.object({
  cursor: z.string().min(1).max(2048).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** A page of a run's events; `cursor` is null at the end of the log. */
export const runEventPageView = z
  .object({
    events: z.array(runEventView),
    cursor: z.string().nullable().meta({ description: "Pass back to read on from here." }),
  })
  .meta({ id: "RunEventPage" });

export const stageEventsQuery = z.object({
  pattern: z.string().min(2).max(16_384).optional().meta({
    description: "An EventBridge event pattern, as JSON",
    example: '{"detail":{"status":["failed"]}}',
  }),
  cursor: z.string().min(1).max(2048).optional(),
  since: z.iso
    .datetime({ offset: true })
    .optional()
    .meta({ description: "Start at the first event recorded at or after this time" }),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

/** A page of the stage's events. It may be empty while `more` says read again at once. */
export const stageEventPageView = z
  .object({
    events: z.array(runEventView),
    cursor: z.string().meta({ description: "Pass back to read on from here." }),
    more: z
      .boolean()
      .meta({ description: "Events are recorded past the cursor: read again at once." }),
  })
  .meta({ id: "StageEventPage" });
