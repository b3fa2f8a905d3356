import { ToolbusError } from "@toolbus/core/errors";
import { RecurrenceBudgetSpent, type RecurrenceRule, readRule, ruleStarts } from "./recurrence";
import {
  type CivilDateTime,
  civilAsUtcMs,
  DAY_MS,
  daysInMonth,
  type IcsTime,
  zonedToUtcMs,
} from "./time";
import { knownTimeZone } from "./zones";

/** The feed is not an iCalendar document, or its structure is broken (e.g. cut off). */
export class IcsFormatError extends ToolbusError {
  override name = "IcsFormatError";
  override readonly code = "ics_malformed";
}

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
  /** Extra instances (RDATE); a PERIOD value contributes its start. */
  rdates: IcsTime[];
  /** RDATE values that could not be read. */
  unreadableRdates: number;
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
  const rdateValues = properties
    .filter((p) => p.name === "RDATE")
    // A PERIOD is start/end or start/duration: its start is the instance.
    .flatMap((p) =>
      p.value.split(",").map((value) => parseTime({ ...p, value: value.split("/")[0] ?? "" })),
    );
  const rdates = rdateValues.filter((t): t is IcsTime => t !== undefined);
  const url = first("URL")?.value.trim();
  const rrule = first("RRULE")?.value.trim();
  return {
    start,
    exdates,
    rdates,
    unreadableRdates: rdateValues.length - rdates.length,
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
function parseTime(property: Pick<IcsProperty, "params" | "value">): IcsTime | undefined {
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
 * database rather than the feed's VTIMEZONE blocks, which are almost always copies of it
 * (Windows names such as Outlook's "W. Europe Standard Time" included); a TZID it does not
 * know is read as UTC and reported.
 */
function place(time: IcsTime): Placement {
  if (time.kind !== "local" || time.tzid === undefined) return { ms: civilAsUtcMs(time.civil) };
  const zone = knownTimeZone(time.tzid);
  if (!zone) return { ms: civilAsUtcMs(time.civil), unknownZone: time.tzid };
  return { ms: zonedToUtcMs(time.civil, zone), timeZone: zone };
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

/**
 * ical.js steps cost about 10 µs each (every candidate is checked against every BY part), so
 * this bounds a feed's expansion to about half a second. Real feeds need far fewer: periods
 * before the window are skipped where their length is fixed.
 */
const DEFAULT_BUDGET = 50_000;

export interface ExpandOptions {
  windowStart: number;
  windowEnd: number;
  /** Enough instances per event: the caller keeps at most this many events overall. */
  limit: number;
  /** Rule steps allowed for the whole feed, so a hostile feed cannot pin the CPU. */
  budget?: number;
}

/**
 * The events of a calendar that overlap [windowStart, windowEnd), recurring events expanded
 * (RRULE and RDATE), with notes on anything read approximately or left out. Cancelled events
 * and instances (STATUS:CANCELLED, EXDATE) are dropped; an instance override (RECURRENCE-ID)
 * replaces the instance it names.
 */
export function occurrencesInWindow(
  calendar: IcsCalendar,
  options: ExpandOptions,
): { occurrences: Occurrence[]; notes: string[] } {
  const occurrences: Occurrence[] = [];
  const unknownZones = new Set<string>();
  const unsupported = new Map<string, number>();
  const budget = { steps: options.budget ?? DEFAULT_BUDGET };
  let exhausted = false;
  let unreadableRdates = 0;

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
    unreadableRdates += event.unreadableRdates;
    const series = {
      event,
      length: eventLength(event, start.ms),
      allDay: event.start.kind === "date",
      zone: start.timeZone === undefined ? {} : { timeZone: start.timeZone },
      excluded: new Set([
        ...event.exdates.map((t) => place(t).ms),
        ...(event.uid !== undefined && !event.recurrenceId
          ? (overridden.get(event.uid) ?? [])
          : []),
      ]),
      listed: new Set<number>(),
      found: 0,
    };
    /** Lists one instance if it is in the window; true once the series has enough. */
    const add = (startMs: number, instanceMs?: number): boolean => {
      if (series.excluded.has(startMs) || series.listed.has(startMs)) return false;
      const endMs = startMs + series.length;
      if (startMs >= options.windowEnd || Math.max(endMs, startMs + 1) <= options.windowStart) {
        return false;
      }
      series.listed.add(startMs);
      occurrences.push({
        event,
        startMs,
        endMs,
        allDay: series.allDay,
        ...series.zone,
        ...(instanceMs === undefined ? {} : { instanceMs }),
      });
      return ++series.found >= options.limit;
    };

    if (event.recurrenceId) {
      // An override stands for one instance, named by its original start.
      add(start.ms, place(event.recurrenceId).ms);
      continue;
    }
    const rule = event.rrule ? readRule(event.rrule) : undefined;
    if (rule === undefined || "unsupported" in rule) {
      if (rule) unsupported.set(rule.unsupported, (unsupported.get(rule.unsupported) ?? 0) + 1);
      // Only an RDATE-only set makes DTSTART one instance of several.
      add(start.ms, rule === undefined && event.rdates.length > 0 ? start.ms : undefined);
    } else {
      try {
        expandRule(event, rule, options, budget, add);
      } catch (error) {
        if (!(error instanceof RecurrenceBudgetSpent)) throw error;
        exhausted = true;
      }
    }
    for (const rdate of event.rdates) {
      if (series.found >= options.limit) break;
      const ms = place({ ...rdate, ...tzidOf(event.start, rdate) }).ms;
      add(ms, ms);
    }
  }

  const notes: string[] = [];
  // A few names say enough; a hostile feed may name thousands.
  for (const zone of [...unknownZones].slice(0, 5)) {
    notes.push(
      `Times in zone "${zone.slice(0, 80)}" were read as UTC: it is not a known time zone name.`,
    );
  }
  if (unknownZones.size > 5) {
    notes.push(`Times in ${unknownZones.size - 5} more unknown zones were read as UTC too.`);
  }
  const rules = [...unsupported];
  for (const [rule, count] of rules.slice(0, 5)) {
    // The first occurrence may lie outside the window: say only what is certain.
    notes.push(
      `${count} recurring event${count === 1 ? "" : "s"} use${count === 1 ? "s" : ""} a rule ` +
        `this tool does not expand (${rule.slice(0, 120)}): occurrences after the first are not listed.`,
    );
  }
  const more = rules.slice(5).reduce((sum, [, count]) => sum + count, 0);
  if (more > 0) {
    notes.push(`${more} more recurring event(s) use rules this tool does not expand.`);
  }
  if (unreadableRdates > 0) {
    notes.push(`${unreadableRdates} extra date(s) (RDATE) could not be read and were left out.`);
  }
  if (exhausted) {
    notes.push("The feed has too many recurrences to expand in full: some may be missing.");
  }
  if (calendar.unreadable > 0) {
    notes.push(`${calendar.unreadable} event(s) without a readable start time were left out.`);
  }
  return { occurrences, notes };
}

/** An RDATE without its own TZID is in DTSTART's zone. */
function tzidOf(start: IcsTime, time: IcsTime): Partial<IcsTime> {
  return time.kind === "local" && time.tzid === undefined && start.kind === "local" && start.tzid
    ? { tzid: start.tzid }
    : {};
}

/** Feeds each rule instance that may touch the window to `add`, until it says stop. */
function expandRule(
  event: IcsEvent,
  rule: RecurrenceRule,
  options: ExpandOptions,
  budget: { steps: number },
  add: (startMs: number, instanceMs: number) => boolean,
): void {
  const toInstant = (civil: CivilDateTime) => place({ ...event.start, civil }).ms;
  const length = eventLength(event, place(event.start).ms);
  const until = rule.until && untilLimit(rule.until);
  // Without COUNT, whole periods before the window need not be walked one by one; the
  // margin covers the zone offset and the event's length.
  const skip =
    rule.count === undefined && rule.periodMs !== undefined
      ? Math.max(
          0,
          Math.floor(
            (options.windowStart - length - civilAsUtcMs(event.start.civil) - 2 * DAY_MS) /
              rule.periodMs,
          ),
        )
      : 0;
  let index = 0;
  for (const civil of ruleStarts(rule, event.start, skip, budget)) {
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
    if (add(startMs, startMs)) break;
  }
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
