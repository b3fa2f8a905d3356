import { describe, expect, it } from "vitest";
import {
  type IcsCalendar,
  IcsFormatError,
  occurrencesInWindow,
  parseContentLine,
  parseDuration,
  parseIcs,
  unescapeText,
} from "./ics";
import { readRule } from "./recurrence";
import { fixture } from "./testing";
import { isoUtc } from "./time";

const community = parseIcs(fixture("community.ics"));

/** A VCALENDAR around the given VEVENT lines, with CRLF line endings. */
function calendarOf(...events: string[][]): IcsCalendar {
  const lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Test//EN"];
  for (const event of events) lines.push("BEGIN:VEVENT", ...event, "END:VEVENT");
  lines.push("END:VCALENDAR");
  return parseIcs(lines.join("\r\n"));
}

function starts(calendar: IcsCalendar, from: string, to: string, limit = 100) {
  const { occurrences, notes } = occurrencesInWindow(calendar, {
    windowStart: Date.parse(from),
    windowEnd: Date.parse(to),
    limit,
  });
  return {
    starts: occurrences.map((o) => isoUtc(o.startMs)).sort(),
    notes,
    occurrences,
  };
}

describe("parseIcs", () => {
  it("reads the feed's name and every VEVENT", () => {
    expect(community.name).toBe("Acme Community Events");
    expect(community.events.map((e) => e.uid)).toEqual([
      "release-party-2026@acme.dev",
      "office-hours@acme.dev",
      "office-hours@acme.dev",
      "hackathon-2026@acme.dev",
      "cancelled-meetup@acme.dev",
      "docs-sprint@acme.dev",
      "maintainers-sync@acme.dev",
    ]);
    expect(community.unreadable).toBe(0);
  });

  it("unfolds long lines and unescapes text values", () => {
    const party = community.events[0];
    expect(party?.description).toBe(
      "Celebrate the 2.0 release with the maintainers.\nDrinks, snacks and a short demo; bring questions!",
    );
    expect(party?.location).toBe("Acme HQ, Main Street 1, Berlin");
    expect(party?.url).toBe("https://acme.dev/events/release-party");
  });

  it("keeps a nested VALARM's properties out of its event", () => {
    expect(community.events[0]?.description).not.toContain("alarm");
  });

  it("restores a UTF-8 character folded between its bytes", () => {
    const bytes = new TextEncoder().encode(
      "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:20260120T100000Z\r\nSUMMARY:Caf\u00e9 meetup\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
    );
    // "é" is C3 A9: fold between the two bytes, as naive producers do at 75 octets.
    const at = bytes.indexOf(0xa9);
    const folded = new Uint8Array([...bytes.slice(0, at), 0x0d, 0x0a, 0x20, ...bytes.slice(at)]);
    expect(parseIcs(folded).events[0]?.summary).toBe("Café meetup");
  });

  it("accepts LF line endings, tab folds and a byte order mark", () => {
    const parsed = parseIcs(
      "\uFEFFBEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260120T100000Z\nSUMMARY:Long\n\ttitle\nEND:VEVENT\nEND:VCALENDAR\n",
    );
    expect(parsed.events[0]?.summary).toBe("Longtitle");
  });

  it("reads quoted parameter values holding separators", () => {
    expect(parseContentLine('ATTENDEE;CN="Doe, Jane";ROLE=CHAIR:mailto:jane@acme.dev')).toEqual({
      name: "ATTENDEE",
      params: { CN: "Doe, Jane", ROLE: "CHAIR" },
      value: "mailto:jane@acme.dev",
    });
    expect(parseContentLine('DTSTART;TZID="Europe/Berlin":20260113T180000')?.params.TZID).toBe(
      "Europe/Berlin",
    );
    expect(parseContentLine("no colon here")).toBeUndefined();
  });

  it("unescapes backslash sequences in one pass", () => {
    expect(unescapeText("a\\nb\\Nc\\,d\\;e\\\\nf")).toBe("a\nb\nc,d;e\\nf");
  });

  it("reads DATE, UTC, zoned and floating start times", () => {
    const [date, utc, zoned, floating] = calendarOf(
      ["UID:a", "DTSTART;VALUE=DATE:20260130"],
      ["UID:b", "DTSTART:20260122T170000Z"],
      ["UID:c", "DTSTART;TZID=Europe/Berlin:20260113T180000"],
      ["UID:d", "DTSTART:20260205T090000"],
    ).events;
    expect(date?.start.kind).toBe("date");
    expect(utc?.start.kind).toBe("utc");
    expect(zoned?.start).toMatchObject({ kind: "local", tzid: "Europe/Berlin" });
    expect(floating?.start).toEqual({
      kind: "local",
      civil: { year: 2026, month: 2, day: 5, hour: 9, minute: 0, second: 0 },
    });
  });

  it("leaves out events without a readable start and counts them", () => {
    const parsed = calendarOf(
      ["UID:no-start", "SUMMARY:Nothing"],
      ["UID:bad-date", "DTSTART:20261345T000000Z"],
      ["UID:ok", "DTSTART:20260120T100000Z"],
    );
    expect(parsed.events.map((e) => e.uid)).toEqual(["ok"]);
    expect(parsed.unreadable).toBe(2);
    expect(starts(parsed, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z").notes).toContain(
      "2 event(s) without a readable start time were left out.",
    );
  });

  it.each([
    ["an HTML page", "<!doctype html><html><body>Not found</body></html>"],
    ["an empty body", ""],
    ["JSON", '{"events":[]}'],
    ["a cut-off feed", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART:20260120T100000Z\r\n"],
    ["mismatched END", "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nEND:VTODO\r\nEND:VCALENDAR\r\n"],
    ["an event outside a calendar", "BEGIN:VEVENT\r\nEND:VEVENT\r\n"],
  ])("rejects %s as malformed", (_, text) => {
    expect(() => parseIcs(text)).toThrow(IcsFormatError);
  });

  it("reads DURATION values", () => {
    expect(parseDuration("PT1H30M")).toBe(90 * 60_000);
    expect(parseDuration("P1DT12H")).toBe(36 * 3_600_000);
    expect(parseDuration("P2W")).toBe(14 * 86_400_000);
    expect(parseDuration("PT45S")).toBe(45_000);
    for (const bad of ["P", "PT", "-PT15M", "1H", "P1DT"])
      expect(parseDuration(bad)).toBeUndefined();
  });
});

describe("occurrencesInWindow", () => {
  it("lists the fixture's events in the default window, cancelled ones left out", () => {
    const { starts: found, occurrences } = starts(
      community,
      "2026-01-15T12:00:00Z",
      "2026-02-14T12:00:00Z",
    );
    expect(found).toEqual([
      "2026-01-20T17:00:00Z", // office hours, 18:00 in Berlin
      "2026-01-22T17:00:00Z", // release party
      "2026-01-30T00:00:00Z", // hackathon, all day
      "2026-02-04T17:00:00Z", // office hours moved from 3 Feb to 4 Feb
      "2026-02-05T09:00:00Z", // docs sprint, floating time read as UTC
      "2026-02-10T16:00:00Z", // monthly sync on the second Tuesday
      "2026-02-10T17:00:00Z", // office hours
    ]);
    expect(occurrences.some((o) => o.event.uid === "cancelled-meetup@acme.dev")).toBe(false);
    const hackathon = occurrences.find((o) => o.event.uid === "hackathon-2026@acme.dev");
    expect(hackathon).toMatchObject({ allDay: true });
    expect(isoUtc(hackathon?.endMs ?? 0)).toBe("2026-02-01T00:00:00Z");
    const moved = occurrences.find((o) => o.event.recurrenceId !== undefined);
    expect(moved?.event.summary).toBe("Office hours (moved to Wednesday)");
    expect(isoUtc(moved?.instanceMs ?? 0)).toBe("2026-02-03T17:00:00Z");
    expect(isoUtc(moved?.endMs ?? 0)).toBe("2026-02-04T18:30:00Z");
  });

  it("stops a COUNT rule after its count, EXDATEs and overrides included in it", () => {
    const officeHours = community.events.filter((e) => e.uid === "office-hours@acme.dev");
    const { starts: found } = starts(
      { events: officeHours, unreadable: 0 },
      "2026-01-01T00:00:00Z",
      "2026-06-01T00:00:00Z",
    );
    // Six instances from 13 Jan: 27 Jan is excluded and 3 Feb moved to 4 Feb.
    expect(found).toEqual([
      "2026-01-13T17:00:00Z",
      "2026-01-20T17:00:00Z",
      "2026-02-04T17:00:00Z",
      "2026-02-10T17:00:00Z",
      "2026-02-17T17:00:00Z",
    ]);
  });

  it("expands the fixture's second-Tuesday sync every month", () => {
    const { starts: found, notes } = starts(
      {
        events: community.events.filter((e) => e.uid === "maintainers-sync@acme.dev"),
        unreadable: 0,
      },
      "2026-01-15T12:00:00Z",
      "2026-06-01T00:00:00Z",
    );
    expect(found).toEqual([
      "2026-02-10T16:00:00Z",
      "2026-03-10T16:00:00Z",
      "2026-04-14T16:00:00Z",
      "2026-05-12T16:00:00Z",
    ]);
    expect(notes).toEqual([]);
  });

  it.each([
    {
      what: "BYSETPOS: the last weekday of each month",
      lines: [
        "DTSTART:20260130T150000Z",
        "RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=4",
      ],
      found: ["01-30T15", "02-27T15", "03-31T15", "04-30T15"],
      notes: [],
    },
    {
      what: "RDATE: extra instances, in DTSTART's zone unless they name their own",
      lines: [
        "DTSTART;TZID=Europe/Berlin:20260105T100000",
        "RRULE:FREQ=WEEKLY;COUNT=2",
        "RDATE;TZID=Europe/Berlin:20260107T100000,20260108T100000",
        "RDATE;VALUE=PERIOD:20260109T080000Z/20260109T090000Z",
        "RDATE:20260110T080000Z",
      ],
      found: ["01-05T09", "01-07T09", "01-08T09", "01-09T08", "01-10T08", "01-12T09"],
      notes: [],
    },
    {
      what: "RDATE without RRULE: the readable dates, and a note on the others",
      lines: ["DTSTART:20260105T100000Z", "RDATE:20260112T100000Z,not-a-date"],
      found: ["01-05T10", "01-12T10"],
      notes: ["1 extra date(s) (RDATE) could not be read and were left out."],
    },
    {
      // 20 Jan is DTSTART (the third Tuesday); 10 Feb is February's second Tuesday.
      what: "BYDAY=2TU in an Outlook (Windows) zone: placed in its IANA zone",
      lines: [
        "DTSTART;TZID=W. Europe Standard Time:20260120T100000",
        "RRULE:FREQ=MONTHLY;BYDAY=2TU;COUNT=2",
      ],
      found: ["01-20T09", "02-10T09"],
      notes: [],
    },
    {
      // The first listed, the other's first occurrence before the window: neither claim holds.
      what: "a rule it does not know: noted without claiming the first occurrence is listed",
      lines: ["DTSTART:20260120T100000Z", "RRULE:FREQ=FORTNIGHTLY"],
      more: ["UID:earlier", "DTSTART:20251120T100000Z", "RRULE:FREQ=FORTNIGHTLY"],
      found: ["01-20T10"],
      notes: [
        "2 recurring events use a rule this tool does not expand (FREQ=FORTNIGHTLY): occurrences after the first are not listed.",
      ],
    },
    {
      what: "a zone it does not know: read as UTC, with a note",
      lines: ["DTSTART;TZID=Customized Time Zone:20260120T100000"],
      found: ["01-20T10"],
      notes: [
        'Times in zone "Customized Time Zone" were read as UTC: it is not a known time zone name.',
      ],
    },
  ])("reads $what", ({ lines, more, found, notes }) => {
    const result = starts(
      calendarOf(["UID:case", ...lines], ...(more ? [more] : [])),
      "2026-01-01T00:00:00Z",
      "2027-01-01T00:00:00Z",
    );
    expect(result.starts).toEqual(found.map((day) => `2026-${day}:00:00Z`));
    expect(result.notes).toEqual(notes);
  });

  it("reports the IANA zone an Outlook zone name stands for", () => {
    const calendar = calendarOf([
      "UID:outlook",
      "DTSTART;TZID=W. Europe Standard Time:20260120T100000",
    ]);
    const { occurrences } = starts(calendar, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z");
    expect(occurrences[0]?.timeZone).toBe("Europe/Berlin");
  });

  it("stops a rule that can never match when the budget runs out, and says so", () => {
    const calendar = calendarOf([
      "UID:thirtieth-of-february",
      "DTSTART:20260101T090000Z",
      "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
    ]);
    const { occurrences, notes } = occurrencesInWindow(calendar, {
      windowStart: Date.parse("2026-01-01T00:00:00Z"),
      windowEnd: Date.parse("2026-03-01T00:00:00Z"),
      limit: 25,
      budget: 5000,
    });
    expect(occurrences.map((o) => isoUtc(o.startMs))).toEqual(["2026-01-01T09:00:00Z"]);
    expect(notes).toEqual([
      "The feed has too many recurrences to expand in full: some may be missing.",
    ]);
  });

  it("expands DAILY with INTERVAL and an inclusive UNTIL", () => {
    const calendar = calendarOf([
      "UID:every-other-day",
      "DTSTART:20260101T080000Z",
      "DTEND:20260101T083000Z",
      "RRULE:FREQ=DAILY;INTERVAL=2;UNTIL=20260109T080000Z",
    ]);
    expect(starts(calendar, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z").starts).toEqual([
      "2026-01-01T08:00:00Z",
      "2026-01-03T08:00:00Z",
      "2026-01-05T08:00:00Z",
      "2026-01-07T08:00:00Z",
      "2026-01-09T08:00:00Z",
    ]);
  });

  it("keeps only the BYDAY weekdays of a DAILY rule", () => {
    const calendar = calendarOf([
      "UID:weekdays",
      "DTSTART:20260105T090000Z",
      "RRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR;COUNT=7",
    ]);
    // Monday 5 Jan: a working week, then Monday and Tuesday of the next.
    expect(starts(calendar, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z").starts).toEqual([
      "2026-01-05T09:00:00Z",
      "2026-01-06T09:00:00Z",
      "2026-01-07T09:00:00Z",
      "2026-01-08T09:00:00Z",
      "2026-01-09T09:00:00Z",
      "2026-01-12T09:00:00Z",
      "2026-01-13T09:00:00Z",
    ]);
  });

  it("expands WEEKLY with INTERVAL and several BYDAY days", () => {
    const calendar = calendarOf([
      "UID:fortnightly",
      "DTSTART:20260105T180000Z",
      "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;UNTIL=20260205T235959Z",
    ]);
    expect(starts(calendar, "2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z").starts).toEqual([
      "2026-01-05T18:00:00Z",
      "2026-01-08T18:00:00Z",
      "2026-01-19T18:00:00Z",
      "2026-01-22T18:00:00Z",
      "2026-02-02T18:00:00Z",
      "2026-02-05T18:00:00Z",
    ]);
  });

  it("keeps a zoned weekly event at the same wall-clock time across a DST change", () => {
    const calendar = calendarOf([
      "UID:dst",
      "DTSTART;TZID=Europe/Berlin:20260324T180000",
      "RRULE:FREQ=WEEKLY;COUNT=3",
    ]);
    const { starts: found, occurrences } = starts(
      calendar,
      "2026-03-01T00:00:00Z",
      "2026-05-01T00:00:00Z",
    );
    expect(found).toEqual(["2026-03-24T17:00:00Z", "2026-03-31T16:00:00Z", "2026-04-07T16:00:00Z"]);
    expect(occurrences[0]?.timeZone).toBe("Europe/Berlin");
  });

  it("skips months without the day for MONTHLY, and expands YEARLY", () => {
    const monthly = calendarOf([
      "UID:month-end",
      "DTSTART;VALUE=DATE:20260131",
      "RRULE:FREQ=MONTHLY;COUNT=4",
    ]);
    expect(starts(monthly, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z").starts).toEqual([
      "2026-01-31T00:00:00Z",
      "2026-03-31T00:00:00Z",
      "2026-05-31T00:00:00Z",
      "2026-07-31T00:00:00Z",
    ]);
    const yearly = calendarOf([
      "UID:anniversary",
      "DTSTART;VALUE=DATE:20200315",
      "RRULE:FREQ=YEARLY;BYMONTH=3;BYMONTHDAY=15",
    ]);
    expect(starts(yearly, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z").starts).toEqual([
      "2026-03-15T00:00:00Z",
    ]);
  });

  it("jumps over years of a long-running series without COUNT", () => {
    const calendar = calendarOf([
      "UID:since-2000",
      "DTSTART;TZID=America/New_York:20000103T090000",
      "DTEND;TZID=America/New_York:20000103T091500",
      "RRULE:FREQ=DAILY",
    ]);
    const { starts: found, notes } = starts(
      calendar,
      "2026-01-15T12:00:00Z",
      "2026-01-18T12:00:00Z",
    );
    // 09:00 in New York is 14:00 UTC in winter.
    expect(found).toEqual(["2026-01-15T14:00:00Z", "2026-01-16T14:00:00Z", "2026-01-17T14:00:00Z"]);
    expect(notes).toEqual([]);
  });

  it("stops expanding when the feed's budget is spent, and says so", () => {
    const calendar = calendarOf([
      "UID:huge-count",
      "DTSTART:19000101T090000Z",
      "RRULE:FREQ=DAILY;COUNT=999999",
    ]);
    const { occurrences, notes } = occurrencesInWindow(calendar, {
      windowStart: Date.parse("2026-01-01T00:00:00Z"),
      windowEnd: Date.parse("2026-02-01T00:00:00Z"),
      limit: 25,
      budget: 1000,
    });
    expect(occurrences).toEqual([]);
    expect(notes).toContain(
      "The feed has too many recurrences to expand in full: some may be missing.",
    );
  });

  it("drops a cancelled instance override from its series", () => {
    const calendar = calendarOf(
      ["UID:standup", "DTSTART:20260105T170000Z", "RRULE:FREQ=DAILY;COUNT=3"],
      [
        "UID:standup",
        "RECURRENCE-ID:20260106T170000Z",
        "DTSTART:20260106T170000Z",
        "STATUS:CANCELLED",
      ],
    );
    expect(starts(calendar, "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z").starts).toEqual([
      "2026-01-05T17:00:00Z",
      "2026-01-07T17:00:00Z",
    ]);
  });

  it("includes an event that began before the window and ends inside it", () => {
    const calendar = calendarOf(
      ["UID:overnight", "DTSTART:20260114T220000Z", "DTEND:20260115T140000Z"],
      ["UID:ended", "DTSTART:20260114T100000Z", "DTEND:20260115T120000Z"],
      ["UID:at-end", "DTSTART:20260116T000000Z"],
    );
    const { occurrences } = starts(calendar, "2026-01-15T12:00:00Z", "2026-01-16T00:00:00Z");
    expect(occurrences.map((o) => o.event.uid)).toEqual(["overnight"]);
  });

  it("stops each series at the limit", () => {
    const calendar = calendarOf(["UID:daily", "DTSTART:20260101T090000Z", "RRULE:FREQ=DAILY"]);
    expect(starts(calendar, "2026-01-01T00:00:00Z", "2026-12-31T00:00:00Z", 3).starts).toEqual([
      "2026-01-01T09:00:00Z",
      "2026-01-02T09:00:00Z",
      "2026-01-03T09:00:00Z",
    ]);
  });
});

describe("readRule", () => {
  it("reads every RFC 5545 part, keeping COUNT and UNTIL for the caller", () => {
    const rule = readRule("FREQ=MONTHLY;BYDAY=TU;BYSETPOS=-1;UNTIL=20261231T235959Z");
    expect(rule).toMatchObject({
      until: { kind: "utc", civil: { year: 2026, month: 12, day: 31, hour: 23 } },
    });
    expect(readRule("FREQ=WEEKLY;INTERVAL=2;COUNT=10")).toMatchObject({
      count: 10,
      periodMs: 14 * 86_400_000,
    });
  });

  it.each([
    ["an unknown FREQ", "FREQ=FORTNIGHTLY", "FREQ=FORTNIGHTLY"],
    ["a rule without FREQ", "INTERVAL=2", "a rule without FREQ"],
    ["an invalid weekday", "FREQ=DAILY;BYDAY=XX", "FREQ=DAILY;BYDAY=XX"],
    [
      "a rule too long to be real",
      `FREQ=DAILY;BYDAY=${"MO,".repeat(400)}TU`,
      "a rule of 1219 characters",
    ],
  ])("reports %s as unsupported", (_, rule, reason) => {
    expect(readRule(rule)).toEqual({ unsupported: reason });
  });
});
