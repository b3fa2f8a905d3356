const MONTHS = new Map<string, number>(
  Object.entries({
    jan: 0,
    feb: 1,
    mar: 2,
    apr: 3,
    may: 4,
    jun: 5,
    jul: 6,
    aug: 7,
    sep: 8,
    oct: 9,
    nov: 10,
    dec: 11,
  }),
);

/** RFC 822 zone names, plus the European ones feeds use in practice; minutes east of UTC. */
const ZONES = new Map<string, number>(
  Object.entries({
    ut: 0,
    utc: 0,
    gmt: 0,
    z: 0,
    est: -300,
    edt: -240,
    cst: -360,
    cdt: -300,
    mst: -420,
    mdt: -360,
    pst: -480,
    pdt: -420,
    bst: 60,
    cet: 60,
    cest: 120,
    eet: 120,
    eest: 180,
  }),
);

// Day name optional, seconds optional, two- or four-digit year, zone as name or offset.
const RFC822 =
  /^(?:[a-z]{3,9}\.?,?\s*)?(\d{1,2})[\s-]+([a-z]{3,9})\.?[\s-]+(\d{2}|\d{4})(?:[\sT]+(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*([a-z]{1,5}|[+-]\d{2}:?\d{2})?$/i;

// W3C-DTF / RFC 3339: a date alone, or a date and time with an optional zone.
const ISO8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T\s](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Reads the dates feeds carry (RSS pubDate in RFC 822, Atom and dc:date in RFC 3339 / W3C-DTF)
 * and returns them as ISO 8601 in UTC. Anything else is undefined rather than a guess:
 * `Date.parse` accepts far too much ("1", "May") to be trusted with upstream text.
 */
export function parseFeedDate(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const text = value.trim().replace(/\s+/g, " ");
  if (text === "") return undefined;
  const time = parseIso(text) ?? parseRfc822(text);
  return time === undefined ? undefined : new Date(time).toISOString();
}

function parseIso(text: string): number | undefined {
  const m = ISO8601.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", fraction = "", zone] = m;
  const ms = Number(`0.${fraction || "0"}`) * 1000;
  // A time without a zone has no single meaning; UTC keeps results the same on every host.
  const offset = zone === undefined ? 0 : zoneOffset(zone);
  if (offset === undefined) return undefined;
  return build(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms, offset);
}

function parseRfc822(text: string): number | undefined {
  const m = RFC822.exec(text);
  if (!m) return undefined;
  const [, d, monthName, y, h = "0", mi = "0", s = "0", zone] = m;
  const month = MONTHS.get((monthName ?? "").slice(0, 3).toLowerCase());
  if (month === undefined) return undefined;
  let year = Number(y);
  // RFC 822 allowed two-digit years; read them the way RFC 2822 says to.
  if ((y ?? "").length === 2) year += year < 50 ? 2000 : 1900;
  // Unknown zone names (military letters, "IST") are too ambiguous to use; read them as UTC.
  const offset = zone === undefined ? 0 : (zoneOffset(zone) ?? 0);
  return build(year, month, Number(d), Number(h), Number(mi), Number(s), 0, offset);
}

function zoneOffset(zone: string): number | undefined {
  const named = ZONES.get(zone.toLowerCase());
  if (named !== undefined) return named;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? "0");
  if (minutes > 18 * 60) return undefined;
  return m[1] === "-" ? -minutes : minutes;
}

function build(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  ms: number,
  offsetMinutes: number,
): number | undefined {
  if (month < 0 || month > 11 || day < 1 || hour > 24 || minute > 59 || second > 60) {
    return undefined;
  }
  const local = Date.UTC(year, month, day, hour, minute, Math.min(second, 59), ms);
  // Date.UTC rolls 31 February over into March; a real date survives the round trip.
  const check = new Date(Date.UTC(year, month, day));
  if (check.getUTCMonth() !== month || check.getUTCDate() !== day) return undefined;
  const time = local - offsetMinutes * 60_000;
  return Number.isFinite(time) ? time : undefined;
}
