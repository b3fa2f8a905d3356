import type { RunEvent } from "@toolbus/wire/model/events";
import { EVENT_SOURCE } from "../../wiring";

/**
 * A logged event as the bus carried it: what patterns are matched against wherever events are
 * read back (replays, the event stream), so a pattern matches there what it matches live.
 */
export function envelopeOf(event: RunEvent): Record<string, unknown> {
  return {
    version: "0",
    id: event.eventKey,
    source: EVENT_SOURCE,
    "detail-type": event.detailType,
    time: event.occurredAt,
    resources: [],
    detail: event.detail,
  };
}
