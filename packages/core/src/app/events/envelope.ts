import type { RunEvent } from "../../model/events";
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

/**
 * What a subscriber receives for an event (a webhook's body, a queue's message): the Standard
 * Webhooks payload shape, `{ type, timestamp, data }`, and `replay: true` for a replay.
 */
export function deliveryBody(
  event: { type: string; timestamp: string; data: unknown },
  replay = false,
): string {
  return JSON.stringify({ ...event, ...(replay ? { replay: true } : {}) });
}
