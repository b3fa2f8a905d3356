import { z } from "zod";
import { ValidationError, zodIssues } from "../errors";
import type { EventLog } from "../ports";
import { DETAIL_TYPES } from "../wiring";

const recordable = z.object({
  "detail-type": z.enum(DETAIL_TYPES),
  time: z.string(),
  detail: z
    .object({
      eventKey: z.string().min(1),
      parentRunId: z.string().min(1),
      scheduledAt: z.string().optional(),
      completedAt: z.string().optional(),
    })
    .passthrough(),
});

/**
 * The recorder: appends every Toolbus event to its run's log. The log orders by the time the
 * event describes (scheduledAt / completedAt), not by arrival, and the append is idempotent
 * by eventKey, so redeliveries and republished events leave the log unchanged.
 */
export function createRecorder(deps: () => { events: EventLog } | Promise<{ events: EventLog }>) {
  return async (event: unknown): Promise<void> => {
    const parsed = recordable.safeParse(event);
    if (!parsed.success) {
      throw new ValidationError("Not a Toolbus event the recorder knows.", {
        details: zodIssues(parsed.error.issues, "(event)"),
      });
    }
    const { detail, time } = parsed.data;
    const { events } = await deps();
    await events.append(detail.parentRunId, {
      eventKey: detail.eventKey,
      detailType: parsed.data["detail-type"],
      occurredAt: detail.scheduledAt ?? detail.completedAt ?? time,
      detail,
    });
  };
}
