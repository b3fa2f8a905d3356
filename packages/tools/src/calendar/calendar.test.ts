import type { ServerResponse } from "node:http";
import { inspect } from "node:util";
import { type ToolContext, ToolFailure, toolSpecOf } from "@toolbus/core/tool-definition";
import { toolSpec } from "@toolbus/wire/model";
import { afterEach, describe, expect, it } from "vitest";
import { calendar, calendarInput, calendarOutput, resolveWindow } from "./calendar";
import { type CalendarSettings, calendarCapability, calendarSettings } from "./capability";
import { mergeEvents, plainText } from "./events";
import {
  calendarContext,
  fixture,
  type GoogleStandIn,
  makeServiceAccount,
  type Route,
  startGoogle,
  startUpstream,
  type Upstream,
} from "./testing";

const NOW = new Date("2026-01-15T12:00:00Z");
const open: Upstream[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((upstream) => upstream.close()));
});

async function upstream(route: Route): Promise<Upstream> {
  const server = await startUpstream(route);
  open.push(server);
  return server;
}

function serveIcs(response: ServerResponse, body = fixture("community.ics")) {
  response.writeHead(200, { "content-type": "text/calendar; charset=utf-8" });
  response.end(body);
}

async function icsFeed(route: Route = (_, response) => serveIcs(response)) {
  const server = await upstream(route);
  return { server, url: `${server.origin}/cal.ics` };
}

/** Each test gets its own service account, so the module's token cache never carries over. */
let accounts = 0;
async function googleAccount(options: { events?: Route; now?: () => Date } = {}) {
  const clientEmail = `reader-${++accounts}@toolbus-test.iam.gserviceaccount.com`;
  const account = makeServiceAccount(clientEmail);
  const stand = await startGoogle({
    publicKey: account.publicKey,
    clientEmail,
    now: () => NOW,
    ...options,
  });
  open.push(stand);
  const settings: Partial<CalendarSettings> = {
    apiBaseUrl: stand.apiBaseUrl,
    tokenUrl: stand.tokenUrl,
    calendarId: "team@group.calendar.google.com",
  };
  return {
    account,
    stand,
    settings,
    secrets: { GOOGLE_CALENDAR_CREDENTIALS: account.credentials },
  };
}

async function run(input: unknown, context: ToolContext<CalendarSettings>) {
  return calendar.execute(calendarInput.parse(input), context);
}

async function failureOf(promise: Promise<unknown>): Promise<ToolFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  return error as ToolFailure;
}

function expectNoSecrets(
  value: unknown,
  account: ReturnType<typeof makeServiceAccount>,
  stand?: GoogleStandIn,
) {
  const texts = [JSON.stringify(value), inspect(value, { depth: 10 })];
  if (value instanceof Error) texts.push(value.message, value.stack ?? "");
  const secrets = [
    account.credentials,
    account.privateKeyPem.split("\n")[1] ?? "PRIVATE",
    "BEGIN PRIVATE KEY",
    ...(stand?.issued ?? []),
  ];
  for (const text of texts) for (const secret of secrets) expect(text).not.toContain(secret);
}

describe("the calendar tool", () => {
  describe("with an ICS feed only", () => {
    it("lists the feed's events in the next 30 days as a Markdown agenda", async () => {
      const { url } = await icsFeed();
      const result = await run({}, calendarContext({ icsUrls: [url] }));
      const { data, output, citations } = result;
      expect(calendarOutput.safeParse(data).success).toBe(true);
      expect(data.window).toEqual({
        timeMin: "2026-01-15T12:00:00Z",
        timeMax: "2026-02-14T12:00:00Z",
      });
      expect(data.events.map((e) => [e.start, e.title])).toEqual([
        ["2026-01-20T17:00:00Z", "Office hours"],
        ["2026-01-22T17:00:00Z", "Release party: Widget 2.0"],
        ["2026-01-30", "Winter hackathon"],
        ["2026-02-04T17:00:00Z", "Office hours (moved to Wednesday)"],
        ["2026-02-05T09:00:00Z", "Docs sprint kickoff"],
        ["2026-02-10T16:00:00Z", "Monthly maintainers sync"],
        ["2026-02-10T17:00:00Z", "Office hours"],
      ]);
      expect(data.events[0]).toEqual({
        id: "office-hours@acme.dev_20260120T170000Z",
        title: "Office hours",
        start: "2026-01-20T17:00:00Z",
        end: "2026-01-20T18:00:00Z",
        allDay: false,
        timeZone: "Europe/Berlin",
        url: "https://acme.dev/office-hours",
        source: "ics",
      });
      expect(data.events[2]).toMatchObject({
        id: "hackathon-2026@acme.dev",
        allDay: true,
        start: "2026-01-30",
        end: "2026-02-01",
        location: "Online",
      });
      expect(data.events[3]?.id).toBe("office-hours@acme.dev_20260203T170000Z");
      expect(data.sources).toEqual([
        {
          source: "ics",
          name: `ICS feed ${new URL(url).host}, "Acme Community Events"`,
          ok: true,
          events: 7,
        },
      ]);
      expect(data.hasMore).toBe(false);
      // The second-Tuesday rule (FREQ=MONTHLY;BYDAY=2TU) is expanded: nothing to note.
      expect(data.notes).toEqual([]);

      expect(output).toContain(
        "Calendar events from Thu 15 Jan 2026 12:00 to Sat 14 Feb 2026 12:00 (UTC): 7 events.",
      );
      expect(output).toContain("### Tue 20 Jan 2026");
      expect(output).toContain(
        "- 17:00–18:00 UTC (18:00–19:00 Europe/Berlin) — [**Office hours**](https://acme.dev/office-hours)",
      );
      expect(output).toContain(
        "### Fri 30 Jan 2026\n- All day, until Sat 31 Jan 2026 — **Winter hackathon** · Online",
      );
      expect(output).toContain("  Celebrate the 2.0 release with the maintainers. Drinks, snacks");
      expect(citations).toContainEqual({
        title: "Release party: Widget 2.0",
        url: "https://acme.dev/events/release-party",
        snippet: "2026-01-22T17:00:00Z – 2026-01-22T19:00:00Z",
      });
      expect(citations).toHaveLength(4);
    });

    it("never shows a feed's path, which may hold its secret", async () => {
      const { server } = await icsFeed();
      const url = `${server.origin}/calendar/ical/team/private-5f1e2d3c4b5a/basic.ics`;
      const result = await run({}, calendarContext({ icsUrls: [url] }));
      expect(JSON.stringify(result)).not.toContain("private-5f1e2d3c4b5a");
    });

    it("merges several feeds, numbering them, and names events that have no UID", async () => {
      const extra = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "BEGIN:VEVENT",
        "DTSTART:20260121T120000Z",
        "DTEND:20260121T130000Z",
        "SUMMARY:Lunch talk",
        "END:VEVENT",
        "END:VCALENDAR",
      ].join("\r\n");
      const { server } = await icsFeed((request, response) =>
        serveIcs(response, request.url.pathname === "/b.ics" ? extra : undefined),
      );
      const urls = [`${server.origin}/a.ics`, `${server.origin}/b.ics`];
      const { data } = await run({ max_results: 3 }, calendarContext({ icsUrls: urls }));
      const host = new URL(server.origin).host;
      expect(data.sources.map((s) => s.name)).toEqual([
        `ICS feed 1 (${host}), "Acme Community Events"`,
        `ICS feed 2 (${host})`,
      ]);
      expect(data.events.map((e) => [e.id, e.title])).toEqual([
        ["office-hours@acme.dev_20260120T170000Z", "Office hours"],
        ["ics-1-0", "Lunch talk"],
        ["release-party-2026@acme.dev", "Release party: Widget 2.0"],
      ]);
    });

    it("keeps max_results and says more events exist", async () => {
      const { url } = await icsFeed();
      const { data, output } = await run({ max_results: 2 }, calendarContext({ icsUrls: [url] }));
      expect(data.events.map((e) => e.title)).toEqual([
        "Office hours",
        "Release party: Widget 2.0",
      ]);
      expect(data.hasMore).toBe(true);
      expect(output).toContain("2+ events");
      expect(output).toContain("narrow time_min/time_max or raise max_results");
    });

    it("says more events exist when one daily series alone fills max_results", async () => {
      const daily = [
        "BEGIN:VCALENDAR",
        "BEGIN:VEVENT",
        "UID:standup@acme.dev",
        "DTSTART:20260101T090000Z",
        "RRULE:FREQ=DAILY",
        "SUMMARY:Stand-up",
        "END:VEVENT",
        "END:VCALENDAR",
      ].join("\r\n");
      const { url } = await icsFeed((_, response) => serveIcs(response, daily));
      const { data } = await run({ max_results: 3 }, calendarContext({ icsUrls: [url] }));
      expect(data.events.map((e) => e.start)).toEqual([
        "2026-01-16T09:00:00Z",
        "2026-01-17T09:00:00Z",
        "2026-01-18T09:00:00Z",
      ]);
      expect(data.hasMore).toBe(true);
    });

    it("reads the window it is given", async () => {
      const { url } = await icsFeed();
      const { data } = await run(
        { time_min: "2026-02-01T00:00:00+01:00", time_max: "2026-02-06T00:00:00+01:00" },
        calendarContext({ icsUrls: [url] }),
      );
      expect(data.window).toEqual({
        timeMin: "2026-01-31T23:00:00Z",
        timeMax: "2026-02-05T23:00:00Z",
      });
      expect(data.events.map((e) => e.title)).toEqual([
        "Winter hackathon",
        "Office hours (moved to Wednesday)",
        "Docs sprint kickoff",
      ]);
    });

    it("says so when nothing is scheduled", async () => {
      const { url } = await icsFeed();
      const { data, output } = await run(
        { time_min: "2027-01-01T00:00:00Z", time_max: "2027-01-02T00:00:00Z" },
        calendarContext({ icsUrls: [url] }),
      );
      expect(data.events).toEqual([]);
      expect(output).toContain("Nothing is scheduled in this window.");
    });
  });

  describe("with a Google service account", () => {
    it("lists the calendar's events and fetches one token for two calls", async () => {
      const google = await googleAccount();
      const context = calendarContext(google.settings, { secrets: google.secrets });
      const first = await run({}, context);
      const second = await run({ max_results: 10 }, context);
      expect(google.stand.tokenRequests()).toHaveLength(1);
      expect(google.stand.eventRequests()).toHaveLength(2);
      expect(google.stand.refusals).toEqual([]);
      expect(first.data.events.map((e) => e.title)).toEqual([
        "Quarterly planning",
        "Company holiday",
        "Release party: Widget 2.0",
      ]);
      expect(first.data.sources).toEqual([
        {
          source: "google",
          name: "Google Calendar (team@group.calendar.google.com)",
          ok: true,
          events: 3,
        },
      ]);
      expect(first.output).toContain("- All day — [**Company holiday**]");
      expect(first.output).toContain("17:00–18:30 UTC (09:00–10:30 America/Los_Angeles)");
      expect(second.data.events).toHaveLength(3);
      expectNoSecrets([first, second], google.account, google.stand);
    });

    it("asks again after the token expires", async () => {
      let now = NOW.getTime();
      const clock = () => new Date(now);
      // The stand-in checks iat against the same moving clock.
      const google = await googleAccount({ now: clock });
      const context = calendarContext(google.settings, { secrets: google.secrets, now: clock });
      await run({}, context);
      now += 3600 * 1000;
      await run({}, context);
      expect(google.stand.tokenRequests()).toHaveLength(2);
      expect(google.stand.refusals).toEqual([]);
    });

    it("merges Google and ICS by start, the same event once (Google's copy)", async () => {
      const google = await googleAccount();
      const { url } = await icsFeed();
      const { data } = await run(
        {},
        calendarContext({ ...google.settings, icsUrls: [url] }, { secrets: google.secrets }),
      );
      expect(data.events.map((e) => `${e.source} ${e.title}`)).toEqual([
        "google Quarterly planning",
        "google Company holiday",
        "ics Office hours",
        "google Release party: Widget 2.0",
        "ics Winter hackathon",
        "ics Office hours (moved to Wednesday)",
        "ics Docs sprint kickoff",
        "ics Monthly maintainers sync",
        "ics Office hours",
      ]);
      expect(data.sources.map((s) => [s.source, s.events])).toEqual([
        ["google", 3],
        ["ics", 7],
      ]);
    });

    it("still answers from the other sources when one fails, and says which", async () => {
      const google = await googleAccount();
      const broken = await icsFeed((_, response) => {
        response.writeHead(404);
        response.end();
      });
      const { data, output } = await run(
        {},
        calendarContext({ ...google.settings, icsUrls: [broken.url] }, { secrets: google.secrets }),
      );
      expect(data.events).toHaveLength(3);
      expect(data.sources[1]).toEqual({
        source: "ics",
        name: `ICS feed ${new URL(broken.url).host}`,
        ok: false,
        events: 0,
        error: `ICS feed ${new URL(broken.url).host} has no such resource (404).`,
      });
      expect(output).toContain(
        `- Not included: ICS feed ${new URL(broken.url).host} has no such resource (404).`,
      );
    });

    it("reports credentials that are not a key file as unavailable, without echoing them", async () => {
      const secret = '{"client_email":"x@y.z","private_key":"hunter2-not-a-key"}';
      const failure = await failureOf(
        run({}, calendarContext({}, { secrets: { GOOGLE_CALENDAR_CREDENTIALS: secret } })),
      );
      expect(failure.failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
      expect(inspect(failure)).not.toContain("hunter2");
    });
  });

  it("is unavailable when no calendar is configured", async () => {
    const failure = await failureOf(run({}, calendarContext({})));
    expect(failure.failure).toEqual({
      kind: "unavailable",
      message:
        "No calendar is configured: set GOOGLE_CALENDAR_CREDENTIALS or tools.calendar.icsUrls.",
      retryable: false,
      recovery: "replan",
    });
  });

  describe("when the upstream misbehaves", () => {
    const hang: Route = () => {
      // Never answers: the client's 2 s timeout fires.
    };
    const status500: Route = (_, response) => {
      response.writeHead(500, { "content-type": "text/plain" });
      response.end("internal error");
    };
    const limited: Route = (_, response) => {
      response.writeHead(429, { "retry-after": "120", "content-type": "application/json" });
      response.end('{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}');
    };
    const malformed: Route = (_, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"kind":"calendar#events","items":[{"id":');
    };
    const huge: Route = (_, response) => {
      response.writeHead(200, { "content-type": "text/calendar" });
      const chunk = "X".repeat(64 * 1024);
      for (let i = 0; i < 80; i++) response.write(chunk); // 5 MB, no Content-Length
      response.end();
    };
    const loop: Route = (request, response) => {
      response.writeHead(302, { location: request.url.pathname + request.url.search });
      response.end();
    };
    const toPrivate: Route = (_, response) => {
      response.writeHead(302, { location: "http://10.0.0.7/calendar.ics" });
      response.end();
    };
    const metadata: Route = (_, response) => {
      response.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" });
      response.end();
    };
    const malformedIcs: Route = (_, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<!doctype html><title>Sign in</title>");
    };

    const cases: [string, Route, Route, Record<string, unknown>][] = [
      ["a timeout", hang, hang, { kind: "timeout", retryable: true }],
      ["a 500", status500, status500, { kind: "upstream_error", retryable: true }],
      ["a 429 with Retry-After", limited, limited, { kind: "rate_limited", retryAfterMs: 120_000 }],
      ["a malformed body", malformed, malformedIcs, { kind: "upstream_error" }],
      ["a huge body", huge, huge, { kind: "upstream_error", retryable: false }],
      ["a redirect loop", loop, loop, { kind: "upstream_error", retryable: false }],
      ["a redirect to a private address", toPrivate, toPrivate, { kind: "unavailable" }],
      ["a redirect to the metadata service", metadata, metadata, { kind: "unavailable" }],
    ];

    it.each(cases)(
      "fails the Google source with the right kind on %s",
      async (_, route, __, expected) => {
        const google = await googleAccount({ events: route });
        const failure = await failureOf(
          run({}, calendarContext(google.settings, { secrets: google.secrets })),
        );
        expect(failure.failure).toMatchObject({ ...expected, recovery: "replan" });
        expect(failure.failure.message).toMatch(/^(The call to )?Google Calendar /);
        expectNoSecrets(failure, google.account, google.stand);
      },
    );

    it.each(cases)(
      "fails an ICS feed with the right kind on %s",
      async (_, __, route, expected) => {
        const { url } = await icsFeed(route);
        const failure = await failureOf(run({}, calendarContext({ icsUrls: [url] })));
        expect(failure.failure).toMatchObject({ ...expected, recovery: "replan" });
        expect(failure.failure.message).toContain(`ICS feed ${new URL(url).host}`);
      },
    );

    it("fails as unavailable when the token endpoint refuses, without leaking the assertion", async () => {
      const google = await googleAccount();
      const stranger = makeServiceAccount(JSON.parse(google.account.credentials).client_email);
      const failure = await failureOf(
        run(
          {},
          calendarContext(google.settings, {
            secrets: { GOOGLE_CALENDAR_CREDENTIALS: stranger.credentials },
          }),
        ),
      );
      expect(failure.failure.kind).toBe("unavailable");
      expect(google.stand.refusals).toEqual(["Invalid JWT Signature."]);
      const assertion = new URLSearchParams(google.stand.tokenRequests()[0]?.body).get("assertion");
      expect(inspect(failure, { depth: 10 })).not.toContain(assertion ?? "never");
      expectNoSecrets(failure, stranger);
    });
  });

  describe("input", () => {
    it("defaults to list_events, no window and 25 results", () => {
      expect(calendarInput.parse({})).toEqual({ action: "list_events", max_results: 25 });
    });

    it.each([
      ["a date without time", { time_min: "2026-01-15" }],
      ["a time without zone", { time_min: "2026-01-15T10:00:00" }],
      ["a space instead of T", { time_max: "2026-01-15 10:00:00Z" }],
      ["an impossible date", { time_min: "2026-02-30T10:00:00Z" }],
      ["a compact offset", { time_min: "2026-01-15T10:00:00+0100" }],
      ["text", { time_min: "tomorrow" }],
      [
        "time_max before time_min",
        { time_min: "2026-02-01T00:00:00Z", time_max: "2026-01-01T00:00:00Z" },
      ],
      ["an empty window", { time_min: "2026-02-01T00:00:00Z", time_max: "2026-02-01T00:00:00Z" }],
      [
        "a window over 366 days",
        { time_min: "2026-01-01T00:00:00Z", time_max: "2027-01-03T00:00:00Z" },
      ],
      ["max_results 0", { max_results: 0 }],
      ["max_results 101", { max_results: 101 }],
      ["another action", { action: "create_event" }],
      ["an unknown field", { calendar: "primary" }],
    ])("rejects %s", (_, input) => {
      expect(calendarInput.safeParse(input).success).toBe(false);
    });

    it("points at time_max when the window is wrong", () => {
      const result = calendarInput.safeParse({
        time_min: "2026-02-01T00:00:00Z",
        time_max: "2026-01-01T00:00:00+01:00",
      });
      expect(result.error?.issues).toMatchObject([
        { path: ["time_max"], message: "time_max must be after time_min" },
      ]);
    });

    it("accepts every example in the spec", () => {
      const examples = calendar.spec.examples ?? [];
      expect(examples.length).toBeGreaterThanOrEqual(2);
      for (const example of examples) {
        expect(calendarInput.safeParse(example.input).success).toBe(true);
      }
    });
  });

  describe("resolveWindow", () => {
    const now = NOW.getTime();
    const iso = (w: { start: number; end: number }) => [
      new Date(w.start).toISOString(),
      new Date(w.end).toISOString(),
    ];

    it("defaults to now and the 30 days after", () => {
      expect(iso(resolveWindow({}, now))).toEqual([
        "2026-01-15T12:00:00.000Z",
        "2026-02-14T12:00:00.000Z",
      ]);
    });

    it("runs 30 days from a given time_min", () => {
      expect(iso(resolveWindow({ time_min: "2026-06-01T00:00:00Z" }, now))).toEqual([
        "2026-06-01T00:00:00.000Z",
        "2026-07-01T00:00:00.000Z",
      ]);
    });

    it("ends 30 days before a past time_max given alone", () => {
      expect(iso(resolveWindow({ time_max: "2026-01-01T00:00:00Z" }, now))).toEqual([
        "2025-12-02T00:00:00.000Z",
        "2026-01-01T00:00:00.000Z",
      ]);
    });

    it("shortens a window over 366 days and says so", () => {
      const window = resolveWindow({ time_max: "2030-01-01T00:00:00Z" }, now);
      expect(iso(window)).toEqual(["2026-01-15T12:00:00.000Z", "2027-01-16T12:00:00.000Z"]);
      expect(window.notes).toEqual([
        "The window was shortened to 366 days, ending 2027-01-16T12:00:00Z.",
      ]);
    });
  });

  describe("plainText", () => {
    it("turns light HTML into lines and decodes references", () => {
      expect(plainText("<p>One &amp; two</p><ul><li>three</li></ul>x  \n\n\n\ny")).toBe(
        "One & two\n- three\nx\n\ny",
      );
    });

    it("reads long runs of spaces and of unclosed tags in one pass", () => {
      expect(plainText(`${" ".repeat(200_000)}x`)).toBe("x");
      expect(plainText(`<b>${"<a".repeat(50_000)}`)?.startsWith("<a<a")).toBe(true);
    });
  });

  describe("mergeEvents", () => {
    const event = (id: string, start: string, allDay = false) => ({
      id,
      title: id,
      start,
      end: start,
      allDay,
      source: "ics" as const,
    });

    it("sorts by start, all-day first on the same instant, and limits", () => {
      const lists = [
        [
          {
            event: event("late", "2026-01-02T10:00:00Z"),
            startMs: Date.parse("2026-01-02T10:00:00Z"),
          },
        ],
        [
          {
            event: event("midnight", "2026-01-02T00:00:00Z"),
            startMs: Date.parse("2026-01-02T00:00:00Z"),
          },
          { event: event("day", "2026-01-02", true), startMs: Date.parse("2026-01-02T00:00:00Z") },
          {
            event: event("early", "2026-01-01T10:00:00Z"),
            startMs: Date.parse("2026-01-01T10:00:00Z"),
          },
        ],
      ];
      const merged = mergeEvents(lists, 3);
      expect(merged.events.map((e) => e.id)).toEqual(["early", "day", "midnight"]);
      expect(merged.total).toBe(4);
    });

    it("keeps the first copy of an event with the same UID and start", () => {
      const startMs = Date.parse("2026-01-02T10:00:00Z");
      const merged = mergeEvents(
        [
          [{ event: event("google-copy", "2026-01-02T10:00:00Z"), startMs, uid: "u1" }],
          [
            { event: event("ics-copy", "2026-01-02T10:00:00Z"), startMs, uid: "u1" },
            {
              event: event("next-week", "2026-01-09T10:00:00Z"),
              startMs: startMs + 7 * 86_400_000,
              uid: "u1",
            },
          ],
        ],
        10,
      );
      expect(merged.events.map((e) => e.id)).toEqual(["google-copy", "next-week"]);
    });
  });

  describe("calendarCapability", () => {
    const account = makeServiceAccount("cap@toolbus-test.iam.gserviceaccount.com");
    const secrets =
      (values: Record<string, string>) =>
      (name: string): string | undefined =>
        values[name];

    it("is available with a readable key", () => {
      expect(
        calendarCapability({}, secrets({ GOOGLE_CALENDAR_CREDENTIALS: account.credentials })),
      ).toEqual({ available: true, source: "secret:GOOGLE_CALENDAR_CREDENTIALS" });
    });

    it("is available with ICS feeds only", () => {
      expect(calendarCapability({ icsUrls: ["https://example.org/a.ics"] }, secrets({}))).toEqual({
        available: true,
        source: "config:tools.calendar.icsUrls",
      });
    });

    it("names both sources when both are there", () => {
      expect(
        calendarCapability(
          { icsUrls: ["https://example.org/a.ics"] },
          secrets({ GOOGLE_CALENDAR_CREDENTIALS: account.credentials }),
        ).source,
      ).toBe("secret:GOOGLE_CALENDAR_CREDENTIALS, config:tools.calendar.icsUrls");
    });

    it("is unavailable with neither, and says what to set", () => {
      expect(calendarCapability(undefined, secrets({}))).toEqual({
        available: false,
        reason:
          "Neither GOOGLE_CALENDAR_CREDENTIALS nor tools.calendar.icsUrls is set on this stage.",
        source: "secret:GOOGLE_CALENDAR_CREDENTIALS, config:tools.calendar.icsUrls",
      });
    });

    it("is unavailable with a secret that is not a key, without echoing it", () => {
      const check = calendarCapability(
        {},
        secrets({ GOOGLE_CALENDAR_CREDENTIALS: "s3cr3t-value" }),
      );
      expect(check.available).toBe(false);
      expect(check.reason).toContain("GOOGLE_CALENDAR_CREDENTIALS is not JSON");
      expect(JSON.stringify(check)).not.toContain("s3cr3t-value");
    });

    it("is unavailable when the settings are invalid", () => {
      expect(calendarCapability({ icsUrls: ["ftp://x/a.ics"] }, secrets({})).available).toBe(false);
    });
  });

  describe("settings", () => {
    it("default to Google's endpoints, the primary calendar and no feeds", () => {
      expect(calendarSettings.parse({})).toEqual({
        calendarId: "primary",
        apiBaseUrl: "https://www.googleapis.com/calendar/v3",
        tokenUrl: "https://oauth2.googleapis.com/token",
        icsUrls: [],
      });
    });

    it("reject feeds that are not http(s) and unknown fields", () => {
      expect(calendarSettings.safeParse({ icsUrls: ["webcal://example.org/a.ics"] }).success).toBe(
        false,
      );
      expect(calendarSettings.safeParse({ calendar: "primary" }).success).toBe(false);
    });
  });

  it("publishes a valid catalog spec", () => {
    const spec = toolSpecOf(calendar);
    expect(toolSpec.parse(spec)).toEqual(spec);
    expect(spec).toMatchObject({
      id: "calendar",
      toolset: "calendar",
      category: "research",
      requires: ["google_calendar", "network"],
      annotations: { readOnly: true, openWorld: true, idempotent: true },
      timeoutMs: 15_000,
      cache: { ttlSeconds: 300, keyFields: ["action", "time_min", "time_max", "max_results"] },
      version: "1",
    });
    expect(spec.guidelines.do.length).toBeGreaterThanOrEqual(3);
    expect(spec.guidelines.dont.length).toBeGreaterThanOrEqual(3);
    expect(spec.setup.map((field) => field.name)).toEqual([
      "GOOGLE_CALENDAR_CREDENTIALS",
      "tools.calendar.calendarId",
      "tools.calendar.impersonate",
      "tools.calendar.icsUrls",
    ]);
    expect(spec.inputSchema).toMatchObject({
      type: "object",
      properties: {
        action: { const: "list_events", default: "list_events" },
        time_min: { type: "string", format: "date-time" },
        max_results: { type: "integer", minimum: 1, maximum: 100, default: 25 },
      },
      additionalProperties: false,
    });
  });
});

describe("calendar acting as its caller", () => {
  it("reads the caller's calendar with their token, never the service account", async () => {
    const { stand, settings, secrets } = await googleAccount();
    stand.issued.push("ya29.alice-own");
    const context = calendarContext(settings, {
      // Both set: the caller's connection wins over the stage's service account.
      secrets: { ...secrets, "connection:google": "ya29.alice-own" },
      now: () => NOW,
    });
    const outcome = await run({ action: "list_events" }, context);
    expect(outcome.data.sources).toContainEqual(expect.objectContaining({ source: "google" }));
    expect(stand.tokenRequests()).toHaveLength(0);
    expect(stand.eventRequests().map((r) => r.headers.authorization)).toEqual([
      "Bearer ya29.alice-own",
    ]);
  });

  it("asks the caller to reconnect when Google refuses their token", async () => {
    const { stand, settings } = await googleAccount();
    stand.issued.push("ya29.revoked");
    stand.revokeIssued();
    const context = calendarContext(settings, {
      secrets: { "connection:google": "ya29.revoked" },
      now: () => NOW,
    });
    const failure = await failureOf(run({ action: "list_events" }, context));
    expect(failure.failure.message).toMatch(/refused your connection \(401\).*reconnect/);
  });
});
