import { describe, expect, it } from "vitest";
import { parseFeedDate } from "./dates";

describe("parseFeedDate", () => {
  it.each([
    ["Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00.000Z"],
    ["Wed, 02 Oct 2002 13:00:00 +0200", "2002-10-02T11:00:00.000Z"],
    ["Mon, 3 Mar 2025 17:00:00 PST", "2025-03-04T01:00:00.000Z"],
    ["Mon, 03 Mar 2025 17:00 EDT", "2025-03-03T21:00:00.000Z"],
    ["Sun, 1 Dec 24 10:00 GMT", "2024-12-01T10:00:00.000Z"],
    ["1 Dec 99 10:00:00 UT", "1999-12-01T10:00:00.000Z"],
    ["Thursday, 06 June 2024 07:05:09 +05:30", "2024-06-06T01:35:09.000Z"],
    ["06 Jun 2024", "2024-06-06T00:00:00.000Z"],
  ])("reads RFC 822 %s", (input, expected) => {
    expect(parseFeedDate(input)).toBe(expected);
  });

  it.each([
    ["2025-03-02T10:00:00Z", "2025-03-02T10:00:00.000Z"],
    ["2025-01-15T08:00:00.250+02:00", "2025-01-15T06:00:00.250Z"],
    ["2002-10-02T10:00-05:00", "2002-10-02T15:00:00.000Z"],
    ["2024-11-20", "2024-11-20T00:00:00.000Z"],
    ["2024-11-20T09:30:00", "2024-11-20T09:30:00.000Z"],
    ["  2024-11-20T09:30:00z ", "2024-11-20T09:30:00.000Z"],
  ])("reads RFC 3339 / W3C-DTF %s", (input, expected) => {
    expect(parseFeedDate(input)).toBe(expected);
  });

  it.each([
    "sometime last week",
    "yesterday",
    "1",
    "May",
    "",
    "2024-02-30",
    "31 Feb 2024 10:00 GMT",
    "2024-13-01",
    "Tue, 10 Foo 2003 04:00:00 GMT",
  ])("returns undefined for %j instead of guessing", (input) => {
    expect(parseFeedDate(input)).toBeUndefined();
  });

  it("reads an unknown zone name as UTC rather than dropping the date", () => {
    expect(parseFeedDate("Mon, 03 Mar 2025 17:00:00 XYZ")).toBe("2025-03-03T17:00:00.000Z");
  });
});
