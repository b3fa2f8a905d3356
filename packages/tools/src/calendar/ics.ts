import { ToolbusError } from "@toolbus/core/errors";
import {
  addDays,
  addMonths,
  type CivilDateTime,
  civilAsUtcMs,
  DAY_MS,
  daysInMonth,
  knownTimeZone,
  weekday,
  zonedToUtcMs,
} from "./time";

/** The feed is not an iCalendar document, or its structure is broken (e.g. cut off). */
export class IcsFormatError extends ToolbusError {
  override name = "IcsFormatError";
  override readonly code = "ics_malformed";
}

/** A DATE or DATE-TIME value as the feed wrote it, before it is placed on the timeline. */
export type IcsTime =
  | { kind: "date"; civil: CivilDateTime }
  | { kind: "utc"; civil: CivilDateTime }
  /** Floating when `tzid` is absent. */
  | { kind: "local"; civil: CivilDateTime; tzid?: string };

export interface IcsProperty {
  name: string;
  params: Record<string, string>;
  value: string;
}

/** One VEVENT: its own properties only (those of a nested VALARM are not mixed in). */
export interface IcsEvent {
  uid?: string;
  summary?: string;
  description?: string;
  location?: string;
  url?: string;
  status?: string;
  start: IcsTime;
  end?: IcsTime;
  durationMs?: number;
  rrule?: string;
  exdates: IcsTime[];
  /** Set on an override of one instance of a recurring event. */
  recurrenceId?: IcsTime;
}

export interface IcsCalendar {
  /** X-WR-CALNAME, the name most producers give the feed. */
  name?: string;
  events: IcsEvent[];
  /** VEVENTs left out because their start could not be read. */
  unreadable: number;
}

/**
 * Parses an iCalendar (RFC 5545) document. Bytes are unfolded before they are decoded so a
 * fold inside a multi-byte UTF-8 character (which some producers write) restores it intact.
 * Lines that are not content lines are skipped; a document that does not start with
 * BEGIN:VCALENDAR or whose BEGIN/END do not pair up is rejected with IcsFormatError.
 */
export function parseIcs(source: string | Uint8Array): IcsCalendar {
  const text =
    typeof source === "string"
      ? source.replace(/^\uFEFF/, "").replace(/\r?\n[ \t]/g, "")
      : new TextDecoder("utf-8").decode(unfoldBytes(source));
  const stack: string[] = [];
  const calendar: IcsCalendar = { events: [], unreadable: 0 };
  let event: IcsProperty[] | undefined;
  let seenCalendar = false;

  for (const line of text.split(/\r\n|\n|\r/)) {
    if (line.trim() === "") continue;
    const property = parseContentLine(line);
    if (!seenCalendar && (property?.name !== "BEGIN" || upper(property.value) !== "VCALENDAR")) {
      throw new IcsFormatError("The document does not start with BEGIN:VCALENDAR.");
    }
    if (!property) continue;
    if (property.name === "BEGIN") {
      const component = upper(property.value);
      if (stack.length === 0 && component !== "VCALENDAR") {
        throw new IcsFormatError(`${component} appears outside a VCALENDAR.`);
      }
      seenCalendar = true;
      stack.push(component);
      if (component === "VEVENT" && stack.length === 2) event = [];
      continue;
    }
    if (property.name === "END") {
      const component = upper(property.value);
      if (stack.at(-1) !== component) {
        throw new IcsFormatError(`END:${component} does not close ${stack.at(-1) ?? "anything"}.`);
      }
      stack.pop();
      if (component === "VEVENT" && event && stack.length === 1) {
        const parsed = buildEvent(event);
        if (parsed) calendar.events.push(parsed);
        else calendar.unreadable++;
        event = undefined;
      }
      continue;
    }
    if (stack.length === 1 && property.name === "X-WR-CALNAME") {
      calendar.name = unescapeText(property.value).trim() || undefined;
    } else if (event && stack.length === 2) {
      event.push(property);
    }
  }
  if (stack.length > 0) {
    throw new IcsFormatError(`The document ends inside ${stack.at(-1)}: it may be cut off.`);
  }
  if (!seenCalendar) throw new IcsFormatError("The document is empty.");
  return calendar;
}

/** Removes CRLF/LF followed by one space or tab: RFC 5545's line folding, at octet level. */
function unfoldBytes(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    const isFold = (at: number) => bytes[at] === 0x20 || bytes[at] === 0x09;
    if (b === 0x0d && bytes[i + 1] === 0x0a && isFold(i + 2)) {
      i += 2;
      continue;
    }
    if (b === 0x0a && isFold(i + 1)) {
      i += 1;
      continue;
    }
    out[length++] = b;
  }
  return out.subarray(0, length);
}

/** name *(";" param) ":" value, with quoted parameter values that may hold ; : and ,. */
export function parseContentLine(line: string): IcsProperty | undefined {
  let i = 0;
  while (i < line.length && line[i] !== ";" && line[i] !== ":") i++;
  const name = upper(line.slice(0, i));
  if (!/^[A-Z0-9-]+$/.test(name)) return undefined;
  const params: Record<string, string> = {};
  while (line[i] === ";") {
    const equals = line.indexOf("=", i + 1);
    if (equals < 0) return undefined;
    const param = upper(line.slice(i + 1, equals));
    i = equals + 1;
    const values: string[] = [];
    for (;;) {
      if (line[i] === '"') {
        const close = line.indexOf('"', i + 1);
        if (close < 0) return undefined;
        values.push(line.slice(i + 1, close));
        i = close + 1;
      } else {
        let j = i;
        while (j < line.length && !";:,".includes(line.charAt(j))) j++;
        values.push(line.slice(i, j));
        i = j;
      }
      if (line[i] !== ",") break;
      i++;
    }
    params[param] = values.join(",");
  }
  if (line[i] !== ":") return undefined;
  return { name, params, value: line.slice(i + 1) };
}

/** TEXT values: \n or \N is a newline, and \, \; \\ stand for the character itself. */
export function unescapeText(value: string): string {
  return value.replace(/\\([nN,;\\])/g, (_, c: string) => (c === "n" || c === "N" ? "\n" : c));
}

function buildEvent(properties: IcsProperty[]): IcsEvent | undefined {
  const first = (name: string) => properties.find((p) => p.name === name);
  const text = (name: string) => {
    const property = first(name);
    if (!property) return undefined;
    const value = unescapeText(property.value).trim();
    return value === "" ? undefined : value;
  };
  const dtstart = first("DTSTART");
  const start = dtstart && parseTime(dtstart);
  if (!start) return undefined;
  const dtend = first("DTEND");
  const end = dtend ? parseTime(dtend) : undefined;
  const duration = first("DURATION");
  const durationMs = duration ? parseDuration(duration.value.trim()) : undefined;
  const recurrence = first("RECURRENCE-ID");
  const recurrenceId = recurrence ? parseTime(recurrence) : undefined;
  const exdates = properties
    .filter((p) => p.name === "EXDATE")
    .flatMap((p) => p.value.split(",").map((value) => parseTime({ ...p, value })))
    .filter((t): t is IcsTime => t !== undefined);
  const url = first("URL")?.value.trim();
  const rrule = first("RRULE")?.value.trim();
  return {
    start,
    exdates,
    ...optional("uid", text("UID")),
    ...optional("summary", text("SUMMARY")),
    ...optional("description", text("DESCRIPTION")),
    ...optional("location", text("LOCATION")),
    ...optional("url", url && /^https?:\/\//i.test(url) && URL.canParse(url) ? url : undefined),
    ...optional("status", text("STATUS")?.toUpperCase()),
    ...optional("end", end),
    ...optional("durationMs", durationMs),
    ...optional("rrule", rrule || undefined),
    ...optional("recurrenceId", recurrenceId),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A DATE (VALUE=DATE or 8 digits) or DATE-TIME: UTC with Z, in TZID, or floating. */
export function parseTime(property: Pick<IcsProperty, "params" | "value">): IcsTime | undefined {
  const value = property.value.trim();
  const date = value.match(/^(\d{4})(\d{2})(\d{2})$/);
  if (date) {
    const civil = checked(Number(date[1]), Number(date[2]), Number(date[3]), 0, 0, 0);
    return civil && { kind: "date", civil };
  }
  if (upper(property.params.VALUE ?? "") === "DATE") return undefined;
  const dateTime = value.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(Z?)$/);
  if (!dateTime) return undefined;
  const [, y, mo, d, h, mi, s, z] = dateTime;
  const civil = checked(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  if (!civil) return undefined;
  if (z === "Z") return { kind: "utc", civil };
  const tzid = property.params.TZID?.trim();
  return tzid ? { kind: "local", civil, tzid } : { kind: "local", civil };
}

function checked(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): CivilDateTime | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  // A leap second (60) is read as the last second of the minute.
  return { year, month, day, hour, minute, second: Math.min(second, 59) };
}

/** dur-value of RFC 5545 (P1W, P2D, PT1H30M, P1DT12H). Negative durations are not used. */
export function parseDuration(value: string): number | undefined {
  const match = value.match(
    /^\+?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/,
  );
  if (!match || value.replace(/^\+/, "") === "P") return undefined;
  const [, w, d, h, m, s] = match.map((part) => Number(part ?? 0));
  return ((((w ?? 0) * 7 + (d ?? 0)) * 24 + (h ?? 0)) * 60 + (m ?? 0)) * 60_000 + (s ?? 0) * 1000;
}

/** Where a time sits on the timeline, and what is worth telling the reader about it. */
export interface Placement {
  ms: number;
  /** The IANA zone the time was written in, when it was one. */
  timeZone?: string;
  /** A TZID Intl does not know: the time was read as if it were UTC. */
  unknownZone?: string;
}

/**
 * Floating times (no zone) are read as UTC: a feed shared with strangers cannot know their
 * zone, and UTC is what Toolbus reports in. A TZID is resolved with the runtime's IANA
 * database rather than the feed's VTIMEZONE blocks, which are almost always copies of it;
 * a TZID it does not know (a Windows zone name, say) is read as UTC and reported.
 */
export function place(time: IcsTime): Placement {
  if (time.kind !== "local" || time.tzid === undefined) return { ms: civilAsUtcMs(time.civil) };
  const zone = knownTimeZone(time.tzid);
  if (!zone) return { ms: civilAsUtcMs(time.civil), unknownZone: time.tzid };
  return { ms: zonedToUtcMs(time.civil, zone), timeZone: zone };
}

const WEEKDAYS = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"] as const;

/** The subset of RRULE this module expands. */
export interface RecurrenceRule {
  freq: "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY";
  interval: number;
  count?: number;
  until?: IcsTime;
  /** 0 = Sunday; DAILY keeps only these days, WEEKLY repeats on them. */
  byDay?: number[];
  weekStart: number;
}

/**
 * Reads an RRULE, or returns why this module will not expand it. Supported: FREQ DAILY,
 * WEEKLY, MONTHLY and YEARLY with INTERVAL, COUNT or UNTIL, WKST, BYDAY (plain weekdays) for
 * DAILY and WEEKLY, and BYMONTH / BYMONTHDAY only where they repeat the start date. Anything
 * else (BYSETPOS, "2TU", BYWEEKNO, HOURLY...) is reported, never guessed at.
 */
export function parseRule(text: string, start: IcsTime): RecurrenceRule | { unsupported: string } {
  const parts = new Map<string, string>();
  for (const part of text.split(";")) {
    const [key, value] = part.split("=");
    if (key && value !== undefined) parts.set(upper(key.trim()), value.trim());
  }
  const freq = upper(parts.get("FREQ") ?? "");
  if (freq !== "DAILY" && freq !== "WEEKLY" && freq !== "MONTHLY" && freq !== "YEARLY") {
    return { unsupported: freq ? `FREQ=${freq}` : "a rule without FREQ" };
  }
  const rule: RecurrenceRule = { freq, interval: 1, weekStart: 1 };
  for (const [key, value] of parts) {
    switch (key) {
      case "FREQ":
        break;
      case "INTERVAL":
      case "COUNT": {
        const n = /^\d{1,6}$/.test(value) ? Number(value) : 0;
        if (n < 1) return { unsupported: `${key}=${value}` };
        if (key === "INTERVAL") rule.interval = n;
        else rule.count = n;
        break;
      }
      case "UNTIL": {
        const until = parseTime({ params: {}, value });
        if (!until) return { unsupported: `UNTIL=${value}` };
        rule.until = until;
        break;
      }
      case "WKST": {
        const day = WEEKDAYS.indexOf(upper(value) as (typeof WEEKDAYS)[number]);
        if (day < 0) return { unsupported: `WKST=${value}` };
        rule.weekStart = day;
        break;
      }
      case "BYDAY": {
        const days = value.split(",").map((d) => WEEKDAYS.indexOf(upper(d) as never));
        if (freq === "MONTHLY" || freq === "YEARLY" || days.some((d) => d < 0)) {
          return { unsupported: `FREQ=${freq};BYDAY=${value}` };
        }
        rule.byDay = [...new Set(days)];
        break;
      }
      case "BYMONTHDAY":
        if ((freq !== "MONTHLY" && freq !== "YEARLY") || Number(value) !== start.civil.day) {
          return { unsupported: `FREQ=${freq};BYMONTHDAY=${value}` };
        }
        break;
      case "BYMONTH":
        if (freq !== "YEARLY" || Number(value) !== start.civil.month) {
          return { unsupported: `FREQ=${freq};BYMONTH=${value}` };
        }
        break;
      default:
        return { unsupported: key };
    }
  }
  if (rule.count !== undefined && rule.until !== undefined) {
    return { unsupported: "COUNT together with UNTIL" };
  }
  return rule;
}

/**
 * Start times the rule produces, in order, beginning with DTSTART (which always counts as
 * the first instance). `skipPeriods` jumps whole periods ahead when COUNT does not need them.
 */
function* candidates(
  rule: RecurrenceRule,
  start: CivilDateTime,
  skipPeriods: number,
): Generator<CivilDateTime> {
  if (skipPeriods === 0) yield start;
  const startKey = civilAsUtcMs(start);
  if (rule.freq === "DAILY") {
    for (let k = Math.max(1, skipPeriods); ; k++) {
      const day = addDays(start, k * rule.interval);
      if (!rule.byDay || rule.byDay.includes(weekday(day))) yield day;
    }
  } else if (rule.freq === "WEEKLY") {
    const offsets = [...new Set(rule.byDay ?? [weekday(start)])]
      .map((day) => (day - rule.weekStart + 7) % 7)
      .sort((a, b) => a - b);
    const weekBegins = addDays(start, -((weekday(start) - rule.weekStart + 7) % 7));
    for (let k = skipPeriods; ; k++) {
      for (const offset of offsets) {
        const day = addDays(weekBegins, k * rule.interval * 7 + offset);
        if (civilAsUtcMs(day) > startKey) yield day;
      }
    }
  } else {
    // An instance on a day the month lacks (the 31st, 29 February) is skipped, not moved.
    const monthsPerPeriod = rule.freq === "MONTHLY" ? rule.interval : 12 * rule.interval;
    for (let k = 1; ; k++) {
      const next = addMonths(start, k * monthsPerPeriod);
      if (next) yield next;
    }
  }
}

export interface Occurrence {
  event: IcsEvent;
  startMs: number;
  endMs: number;
  allDay: boolean;
  timeZone?: string;
  /** Set on instances of a recurring event: the instance's original start (RECURRENCE-ID). */
  instanceMs?: number;
}

export interface ExpandOptions {
  windowStart: number;
  windowEnd: number;
  /** Enough instances per event: the caller keeps at most this many events overall. */
  limit: number;
  /** Rule steps allowed for the whole feed, so a hostile feed cannot pin the CPU. */
  budget?: number;
}

/**
 * The events of a calendar that overlap [windowStart, windowEnd), recurring events expanded,
 * with notes on anything read approximately or left out. Cancelled events and instances
 * (STATUS:CANCELLED, EXDATE) are dropped; an instance override (RECURRENCE-ID) replaces the
 * instance it names.
 */
export function occurrencesInWindow(
  calendar: IcsCalendar,
  options: ExpandOptions,
): { occurrences: Occurrence[]; notes: string[] } {
  const occurrences: Occurrence[] = [];
  const unknownZones = new Set<string>();
  const unsupported = new Map<string, number>();
  const state = { budget: options.budget ?? 200_000, exhausted: false };

  const overridden = new Map<string, Set<number>>();
  for (const event of calendar.events) {
    if (event.recurrenceId && event.uid !== undefined) {
      const instants = overridden.get(event.uid) ?? new Set<number>();
      instants.add(place(event.recurrenceId).ms);
      overridden.set(event.uid, instants);
    }
  }

  for (const event of calendar.events) {
    if (event.status === "CANCELLED") continue;
    const start = place(event.start);
    if (start.unknownZone) unknownZones.add(start.unknownZone);
    const allDay = event.start.kind === "date";
    const length = eventLength(event, start.ms);
    const zone = start.timeZone === undefined ? {} : { timeZone: start.timeZone };
    const inWindow = (s: number, e: number) =>
      s < options.windowEnd && Math.max(e, s + 1) > options.windowStart;

    const rule = event.rrule && !event.recurrenceId ? parseRule(event.rrule, event.start) : null;
    if (rule === null || "unsupported" in rule) {
      if (rule) unsupported.set(rule.unsupported, (unsupported.get(rule.unsupported) ?? 0) + 1);
      const endMs = start.ms + length;
      const replaced =
        !event.recurrenceId && event.uid !== undefined && overridden.get(event.uid)?.has(start.ms);
      if (!replaced && inWindow(start.ms, endMs)) {
        const instance = event.recurrenceId ? { instanceMs: place(event.recurrenceId).ms } : {};
        occurrences.push({ event, startMs: start.ms, endMs, allDay, ...zone, ...instance });
      }
      continue;
    }

    const toInstant = (civil: CivilDateTime) => place({ ...event.start, civil }).ms;
    const excluded = new Set([
      ...event.exdates.map((t) => place(t).ms),
      ...(event.uid !== undefined ? (overridden.get(event.uid) ?? []) : []),
    ]);
    const until = rule.until && untilLimit(rule.until);
    const firstKey = civilAsUtcMs(event.start.civil);
    // Without COUNT, whole periods before the window need not be walked one by one.
    const periodDays =
      rule.freq === "DAILY" ? rule.interval : rule.freq === "WEEKLY" ? 7 * rule.interval : 0;
    const skip =
      rule.count === undefined && periodDays > 0
        ? Math.max(
            0,
            Math.floor(
              (options.windowStart - length - firstKey - 2 * DAY_MS) / (periodDays * DAY_MS),
            ),
          )
        : 0;

    let index = 0;
    let found = 0;
    for (const civil of candidates(rule, event.start.civil, skip)) {
      if (--state.budget < 0) {
        state.exhausted = true;
        break;
      }
      index++;
      if (rule.count !== undefined && index > rule.count) break;
      // Reading civil time as UTC is off by at most a zone offset (under a day).
      const approx = civilAsUtcMs(civil);
      if (until) {
        const past =
          until.kind === "date" || Math.abs(approx - until.ms) > DAY_MS
            ? approx > until.ms
            : toInstant(civil) > until.ms;
        if (past) break;
      }
      if (approx - DAY_MS >= options.windowEnd) break;
      if (approx + length + DAY_MS < options.windowStart) continue;
      const startMs = toInstant(civil);
      if (excluded.has(startMs) || !inWindow(startMs, startMs + length)) continue;
      occurrences.push({
        event,
        startMs,
        endMs: startMs + length,
        allDay,
        ...zone,
        instanceMs: startMs,
      });
      if (++found >= options.limit) break;
    }
  }

  const notes: string[] = [];
  for (const zone of unknownZones) {
    notes.push(`Times in zone "${zone}" were read as UTC: it is not an IANA time zone name.`);
  }
  for (const [rule, count] of unsupported) {
    notes.push(
      `${count} recurring event${count === 1 ? "" : "s"} use${count === 1 ? "s" : ""} a rule ` +
        `this tool does not expand (${rule}): only the first occurrence is listed.`,
    );
  }
  if (state.exhausted) {
    notes.push("The feed has too many recurrences to expand in full: some may be missing.");
  }
  if (calendar.unreadable > 0) {
    notes.push(`${calendar.unreadable} event(s) without a readable start time were left out.`);
  }
  return { occurrences, notes };
}

/** Inclusive UNTIL as a comparable instant; a DATE includes the whole day. */
function untilLimit(until: IcsTime): { kind: "date" | "instant"; ms: number } {
  if (until.kind === "date") return { kind: "date", ms: civilAsUtcMs(until.civil) + DAY_MS - 1 };
  return { kind: "instant", ms: place(until).ms };
}

/** DTEND − DTSTART, else DURATION, else one day for an all-day event and zero otherwise. */
function eventLength(event: IcsEvent, startMs: number): number {
  if (event.end) return Math.max(0, place(event.end).ms - startMs);
  if (event.durationMs !== undefined) return event.durationMs;
  return event.start.kind === "date" ? DAY_MS : 0;
}

function upper(value: string): string {
  return value.trim().toUpperCase();
}
