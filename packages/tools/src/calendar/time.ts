/** A wall-clock date and time with no zone attached: how calendars write local times. */
export interface CivilDateTime {
  year: number;
  /** 1..12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * A DATE or DATE-TIME value as a feed wrote it, before it is placed on the timeline. Here
 * rather than beside the parser: recurrence expansion reads it too, and the parser reads
 * recurrence.
 */
export type IcsTime =
  | { kind: "date"; civil: CivilDateTime }
  | { kind: "utc"; civil: CivilDateTime }
  /** Floating when `tzid` is absent. */
  | { kind: "local"; civil: CivilDateTime; tzid?: string };

export const DAY_MS = 86_400_000;

/** The civil fields read as if they were UTC: exact for UTC, an ordering key for the rest. */
export function civilAsUtcMs(t: CivilDateTime): number {
  return Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);
}

export function civilFromUtcMs(ms: number): CivilDateTime {
  const d = new Date(ms);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function dateKey(t: CivilDateTime): string {
  return `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)}`;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

const formatters = new Map<string, Intl.DateTimeFormat | null>();

/** Whether the runtime's Intl knows `zone` (an IANA name or alias). */
export function supportsZone(zone: string): boolean {
  return formatter(zone) !== undefined;
}

function formatter(zone: string): Intl.DateTimeFormat | undefined {
  let cached = formatters.get(zone);
  if (cached === undefined) {
    try {
      cached = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
      });
    } catch {
      cached = null;
    }
    if (formatters.size < 1000) formatters.set(zone, cached);
  }
  return cached ?? undefined;
}

/** The wall-clock reading of an instant in a zone Intl knows. */
export function civilInZone(ms: number, zone: string): CivilDateTime {
  const format = formatter(zone);
  if (!format) return civilFromUtcMs(ms);
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(ms))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

/**
 * The instant a wall-clock time in `zone` names. Zones change offset at most once a day, so
 * the offsets a day before and a day after are the only candidates. A repeated time (fall
 * back) resolves to its first occurrence; a time inside a spring-forward gap keeps the offset
 * from before the gap, both as RFC 5545 asks.
 */
export function zonedToUtcMs(t: CivilDateTime, zone: string): number {
  const wall = civilAsUtcMs(t);
  const offsetAt = (instant: number) => civilAsUtcMs(civilInZone(instant, zone)) - instant;
  const before = wall - offsetAt(wall - DAY_MS);
  const after = wall - offsetAt(wall + DAY_MS);
  const readsBack = (instant: number) => civilAsUtcMs(civilInZone(instant, zone)) === wall;
  const matching = [before, after].filter(readsBack);
  return matching.length > 0 ? Math.min(...matching) : before;
}

/** RFC 3339 in UTC without the milliseconds Date adds. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}
