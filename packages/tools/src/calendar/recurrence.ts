import ICAL from "ical.js";
import { type CivilDateTime, civilAsUtcMs, civilFromUtcMs, type IcsTime } from "./time";

/**
 * RRULE expansion by ical.js, which implements all of RFC 5545's rule parts (BYSETPOS,
 * "2TU", BYWEEKNO, ...). It runs on floating wall-clock times only: where an instance falls on
 * the timeline is still decided by `place` in ics.ts, with the runtime's zone database.
 */

/** A rule this long is not a calendar's; its parts would make every step slow. */
const MAX_RULE_CHARS = 1000;

/** A rule ical.js can expand, and its UNTIL, which the caller applies against real instants. */
export interface RecurrenceRule {
  recur: InstanceType<typeof ICAL.Recur>;
  count?: number;
  until?: IcsTime;
  /** Length of one period when it is fixed (DAILY and shorter, WEEKLY): periods can be skipped. */
  periodMs?: number;
}

const FIXED_PERIOD_MS: Record<string, number> = {
  SECONDLY: 1000,
  MINUTELY: 60_000,
  HOURLY: 3_600_000,
  DAILY: 86_400_000,
  WEEKLY: 7 * 86_400_000,
};

/** Reads an RRULE value, or says why it will not be expanded (quoted in a note). */
export function readRule(text: string): RecurrenceRule | { unsupported: string } {
  if (text.length > MAX_RULE_CHARS) {
    return { unsupported: `a rule of ${text.length} characters` };
  }
  let recur: InstanceType<typeof ICAL.Recur>;
  try {
    recur = ICAL.Recur.fromString(text);
  } catch {
    return { unsupported: text };
  }
  if (
    !recur.freq ||
    !(recur.freq in FIXED_PERIOD_MS || ["MONTHLY", "YEARLY"].includes(recur.freq))
  ) {
    return { unsupported: recur.freq ? `FREQ=${recur.freq}` : "a rule without FREQ" };
  }
  const until = recur.until ? fromIcalTime(recur.until) : undefined;
  // UNTIL is compared against placed instants by the caller: ical.js would compare floating
  // wall-clock times with a UTC UNTIL and be off by the zone's offset.
  recur.until = null;
  const period = FIXED_PERIOD_MS[recur.freq];
  return {
    recur,
    ...(recur.count ? { count: recur.count } : {}),
    ...(until ? { until } : {}),
    ...(period === undefined ? {} : { periodMs: period * Math.max(1, recur.interval) }),
  };
}

/** Thrown when a feed's step budget runs out in the middle of a rule. */
export class RecurrenceBudgetSpent extends Error {
  override name = "RecurrenceBudgetSpent";
}

/**
 * The rule's start times in order, from DTSTART or, with `skipPeriods`, from that many whole
 * periods later (the caller skips only periods wholly before its window, so the shifted start
 * itself, which ical.js always yields first, is never shown). Every step ical.js takes,
 * including those that find nothing (a DAILY rule for 30 February steps forever), is paid for
 * from `budget`; when it runs out RecurrenceBudgetSpent is thrown.
 */
export function* ruleStarts(
  rule: RecurrenceRule,
  start: IcsTime,
  skipPeriods: number,
  budget: { steps: number },
): Generator<CivilDateTime> {
  const first =
    skipPeriods > 0 && rule.periodMs !== undefined
      ? civilFromUtcMs(civilAsUtcMs(start.civil) + skipPeriods * rule.periodMs)
      : start.civil;
  const iterator = rule.recur.iterator(
    ICAL.Time.fromData({ ...first, isDate: start.kind === "date" }),
  );
  const step = iterator.check_contracting_rules.bind(iterator);
  iterator.check_contracting_rules = () => {
    if (--budget.steps < 0) throw new RecurrenceBudgetSpent();
    return step();
  };
  let pending = skipPeriods === 0;
  for (let next = iterator.next(); next; next = iterator.next()) {
    if (--budget.steps < 0) throw new RecurrenceBudgetSpent();
    const civil = fromIcalTime(next).civil;
    // DTSTART is always the first instance (RFC 5545), even where the rule would not
    // produce it; ical.js starts at the rule's first match instead.
    if (pending && civilAsUtcMs(civil) > civilAsUtcMs(start.civil)) yield start.civil;
    pending = false;
    yield civil;
  }
}

function fromIcalTime(time: InstanceType<typeof ICAL.Time>): IcsTime {
  const civil = {
    year: time.year,
    month: time.month,
    day: time.day,
    hour: time.hour,
    minute: time.minute,
    second: time.second,
  };
  if (time.isDate) return { kind: "date", civil };
  return time.zone === ICAL.Timezone.utcTimezone
    ? { kind: "utc", civil }
    : { kind: "local", civil };
}
