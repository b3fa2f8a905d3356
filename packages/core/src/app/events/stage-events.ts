import type { CompiledPattern } from "@toolbus/pattern";
import type { RunEvent } from "@toolbus/wire/model/events";
import { ValidationError } from "../../errors";
import type { EventStream } from "../../ports";
import { envelopeOf } from "./envelope";
import { parseEventPattern } from "./pattern";

const DEFAULT_STREAM_PAGE = 100;
const MAX_STREAM_PAGE = 1_000;
/**
 * Places one read looks at when a pattern filters them: a rare match costs pages that come
 * back empty (with a cursor further on, and `more`), never one unbounded read.
 */
const SCAN_PLACES = 1_000;

export interface StageEventsPage {
  events: RunEvent[];
  /** Read on from here; present even when nothing new came, so a follower polls on. */
  cursor: string;
  /** More places are committed past the cursor: read again at once. */
  more: boolean;
}

/** Where a reader of the stream starts. */
export interface StreamStart {
  /** After this cursor (one a previous page gave). */
  cursor?: string | undefined;
  /** From the first event the stage recorded at or after this time. */
  since?: string | undefined;
}

/**
 * The stage's events across all runs, in the stream's order, filtered by an event pattern
 * (the same patterns, with the same matcher, as subscriptions). A cursor is a place in the
 * stream; without one a reader starts at the head, so it sees what happens from now on.
 */
export class StageEvents {
  constructor(private readonly stream: EventStream) {}

  /** The caller's pattern, compiled; a 400 naming what is wrong with it. */
  pattern(text: string | undefined): CompiledPattern | undefined {
    return text === undefined ? undefined : parseEventPattern(text, "event pattern").compiled;
  }

  /** The place a reader reads after. */
  async start({ cursor, since }: StreamStart): Promise<number> {
    if (cursor !== undefined) return placeOf(cursor);
    if (since !== undefined) return (await this.stream.placeAt(new Date(since))) - 1;
    return this.stream.head();
  }

  async page(
    after: number,
    options: { pattern?: CompiledPattern | undefined; limit?: number | undefined } = {},
  ): Promise<StageEventsPage> {
    const limit = Math.min(options.limit ?? DEFAULT_STREAM_PAGE, MAX_STREAM_PAGE);
    const { pattern } = options;
    const read = await this.stream.read(after, pattern ? SCAN_PLACES : limit);
    const events: RunEvent[] = [];
    let through = read.through;
    for (const entry of read.entries) {
      if (pattern && !pattern.matches(envelopeOf(entry.event))) continue;
      events.push(entry.event);
      if (events.length === limit) {
        through = entry.seq;
        break;
      }
    }
    return { events, cursor: String(through), more: through < read.head };
  }

  appended(signal: AbortSignal): Promise<void> {
    return this.stream.appended?.(signal) ?? new Promise(() => undefined);
  }
}

/** A stream cursor is a place: digits, as a page gave them. */
function placeOf(cursor: string): number {
  const place = /^\d{1,15}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!Number.isSafeInteger(place)) {
    throw new ValidationError("The cursor is not valid; use one returned by a previous read.", {
      details: [{ path: "cursor", message: "a place in the stream, as a page returned it" }],
    });
  }
  return place;
}
