import type { ToolResultReceived } from "@toolbus/wire/model/events";

/**
 * EventBridge takes entries up to 256 KB, counting source, detail-type and detail. We stay
 * well below it so the envelope's own fields never tip an entry over.
 */
export const MAX_EVENT_DETAIL_BYTES = 240 * 1024;
/** How much of the text output an oversize result's event still carries. */
export const PREVIEW_CHARS = 4_000;

export function detailBytes(detail: unknown): number {
  return Buffer.byteLength(JSON.stringify(detail));
}

/**
 * A result too large for an event is announced with a preview: the full result stays on the
 * call record, where `GET /v1/runs/{runId}/calls/{callId}` serves it.
 */
export function fitResultEvent(detail: ToolResultReceived): ToolResultReceived {
  if (detailBytes(detail) <= MAX_EVENT_DETAIL_BYTES) return detail;
  // Content blocks (images, files) are not previewed: the event says the result was omitted.
  const { content: _content, ...rest } = detail;
  return {
    ...rest,
    output: detail.output.slice(0, PREVIEW_CHARS),
    data: null,
    citations: detail.citations.slice(0, 20),
    resultOmitted: true,
  };
}
