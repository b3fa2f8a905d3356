/** An event as Toolbus logs it: what a delivery body is made of. */
interface LoggedEvent {
  detailType: string;
  occurredAt: string;
  detail: unknown;
}

/**
 * What a subscriber receives for an event (a webhook's body, a queue's message, what
 * `toolbus listen` forwards): the Standard Webhooks payload shape `{ type, timestamp, data }`,
 * with `replay: true` for a replay. `timestamp` is when the event happened, the same however
 * the event is sent.
 */
export function deliveryBody(event: LoggedEvent, replay = false): string {
  return JSON.stringify({
    type: event.detailType,
    timestamp: event.occurredAt,
    data: event.detail,
    ...(replay ? { replay: true } : {}),
  });
}
