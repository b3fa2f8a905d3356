import { describe, expect, it } from "vitest";
import { civilInZone, isoUtc, zonedToUtcMs } from "./time";
import { knownTimeZone } from "./zones";

const civil = (y: number, mo: number, d: number, h = 0, mi = 0) => ({
  year: y,
  month: mo,
  day: d,
  hour: h,
  minute: mi,
  second: 0,
});

describe("time zones", () => {
  it("places a wall-clock time in a zone on both sides of a DST change", () => {
    expect(isoUtc(zonedToUtcMs(civil(2026, 1, 13, 18), "Europe/Berlin"))).toBe(
      "2026-01-13T17:00:00Z",
    );
    expect(isoUtc(zonedToUtcMs(civil(2026, 7, 14, 18), "Europe/Berlin"))).toBe(
      "2026-07-14T16:00:00Z",
    );
    expect(isoUtc(zonedToUtcMs(civil(2026, 1, 16, 9), "America/Los_Angeles"))).toBe(
      "2026-01-16T17:00:00Z",
    );
  });

  it("reads a time skipped by spring-forward with the offset from before the gap", () => {
    // 02:30 does not exist in New York on 8 March 2026; RFC 5545 means 03:30 EDT.
    expect(isoUtc(zonedToUtcMs(civil(2026, 3, 8, 2, 30), "America/New_York"))).toBe(
      "2026-03-08T07:30:00Z",
    );
  });

  it("reads a time repeated by fall-back as its first occurrence", () => {
    // 02:30 happens twice in Berlin on 25 October 2026: first in CEST (+02:00).
    expect(isoUtc(zonedToUtcMs(civil(2026, 10, 25, 2, 30), "Europe/Berlin"))).toBe(
      "2026-10-25T00:30:00Z",
    );
  });

  it("knows IANA zones, including ones behind a producer's path prefix, and no others", () => {
    expect(knownTimeZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(knownTimeZone("/mozilla.org/20050126_1/America/New_York")).toBe("America/New_York");
    expect(knownTimeZone("Made Up Standard Time")).toBeUndefined();
  });

  it("maps the Windows zone names Outlook writes to their IANA zone", () => {
    expect(knownTimeZone("W. Europe Standard Time")).toBe("Europe/Berlin");
    expect(knownTimeZone("Pacific Standard Time")).toBe("America/Los_Angeles");
  });

  it("reads an instant as the wall clock of a zone", () => {
    expect(civilInZone(Date.parse("2026-01-16T17:00:00Z"), "America/Los_Angeles")).toEqual(
      civil(2026, 1, 16, 9),
    );
  });
});
