import * as z from "zod";

const DESCRIPTION_LIMIT = 500;

export const calendarEvent = z.object({
  id: z.string().describe("The event's id at its source; a recurring instance has its own."),
  title: z.string(),
  start: z.string().describe("RFC 3339 in UTC for a timed event; YYYY-MM-DD for an all-day event."),
  end: z
    .string()
    .describe("Like start. For an all-day event, the day after the last day (exclusive)."),
  allDay: z.boolean(),
  timeZone: z.string().optional().describe("The IANA zone the event was scheduled in."),
  location: z.string().optional(),
  description: z.string().optional().describe(`Plain text, cut at ${DESCRIPTION_LIMIT} chars.`),
  url: z.string().optional().describe("A link to the event, when the source gives one."),
  source: z.enum(["google", "ics"]),
});
export type CalendarEvent = z.infer<typeof calendarEvent>;

/** An event and what merging needs to know about it but does not show. */
export interface FoundEvent {
  event: CalendarEvent;
  startMs: number;
  /** iCalendar UID (Google's iCalUID): the same event seen in two sources shares it. */
  uid?: string;
}

/**
 * One list from several sources, earliest first. The first source to report an event wins,
 * so listing Google before ICS keeps Google's richer copy of a calendar also published as ICS.
 */
export function mergeEvents(
  lists: readonly (readonly FoundEvent[])[],
  limit: number,
): { events: CalendarEvent[]; total: number } {
  const seen = new Set<string>();
  const merged: FoundEvent[] = [];
  for (const list of lists) {
    for (const found of list) {
      if (found.uid !== undefined) {
        const key = `${found.uid}\n${found.startMs}`;
        if (seen.has(key)) continue;
        seen.add(key);
      }
      merged.push(found);
    }
  }
  merged.sort(
    (a, b) =>
      a.startMs - b.startMs ||
      Number(b.event.allDay) - Number(a.event.allDay) ||
      a.event.title.localeCompare(b.event.title, "en"),
  );
  return { events: merged.slice(0, limit).map((found) => found.event), total: merged.length };
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
};

/**
 * Descriptions arrive as plain text (ICS) or light HTML (Google's editor writes <br>, <b>,
 * <a>): both become plain text with line breaks, cut to a length an agent can use.
 */
export function plainText(value: string, limit = DESCRIPTION_LIMIT): string | undefined {
  let text = value;
  // `[^<>]` rather than `[^>]`: a tag scan stops at the next "<", so text with many "<" and
  // no ">" costs one pass instead of one pass per "<".
  if (/<\/?[a-z][^<>]*>/i.test(text)) {
    text = text
      .replace(/<(?:br|\/p|\/div|\/li|\/h[1-6])\b[^<>]*>/gi, "\n")
      .replace(/<li\b[^<>]*>/gi, "- ")
      .replace(/<[^<>]*>/g, "");
  }
  text = text
    .replace(/&(#x[0-9a-f]{1,6}|#\d{1,7}|[a-z]+);/gi, (entity, name: string) => {
      if (name.startsWith("#")) {
        const code =
          name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1));
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
      }
      return ENTITIES[name.toLowerCase()] ?? entity;
    })
    .replace(/\r\n?/g, "\n")
    // Per line, not /[ \t]+\n/: that pattern rescans a long run of spaces from each of them.
    .split("\n")
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (text === "") return undefined;
  return truncate(text, limit);
}

export function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const cut = [...text].slice(0, limit - 1).join("");
  return `${cut.trimEnd()}…`;
}
