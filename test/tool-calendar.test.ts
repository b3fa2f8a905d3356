import { networkCapability } from "@toolbus/core";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { calendar, calendarToolset, googleCalendarCapability } from "@toolbus/tools/calendar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixture,
  type GoogleStandIn,
  makeServiceAccount,
  startGoogle,
  startUpstream,
  type Upstream,
} from "../packages/tools/src/calendar/testing";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/** The fixtures' events fall in this window; the system runs on the real clock. */
const WINDOW = { time_min: "2026-01-15T12:00:00Z", time_max: "2026-02-14T12:00:00Z" };

interface CallView {
  parentRunId: string;
  callId: string;
  status: string;
  result: {
    output: string;
    data: {
      events: { title: string; start: string; source: string }[];
      sources: { source: string; ok: boolean }[];
    };
    citations: { url: string }[];
    failure?: { kind: string; message: string };
    cached: boolean;
  };
}

interface EventView {
  detailType: string;
  detail: Record<string, unknown>;
}

const tools = [...builtinTools.filter((tool) => tool.spec.id !== "calendar"), calendar];
const toolsets = [...builtinToolsets.filter((set) => set.name !== "calendar"), calendarToolset];
const capabilities = [googleCalendarCapability, networkCapability];

async function call(system: TestToolbus, input: unknown, callId: string) {
  const runId = system.runId();
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "calendar", input, callId, wait: 20 },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

async function runEvents(system: TestToolbus, runId: string): Promise<EventView[]> {
  await system.settle();
  const response = await system.request(`/v1/runs/${runId}/events`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: EventView[] }).events;
}

describe("calendar through the API, with an ICS feed", () => {
  let system: TestToolbus;
  let feed: Upstream;

  beforeAll(async () => {
    feed = await startUpstream((_, response) => {
      response.writeHead(200, { "content-type": "text/calendar; charset=utf-8" });
      response.end(fixture("community.ics"));
    });
    system = await startTestToolbus({
      tools,
      toolsets,
      capabilities,
      config: {
        outbound: { allowHosts: ["127.0.0.1"] },
        tools: { calendar: { icsUrls: [`${feed.origin}/cal.ics`] } },
      },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await feed?.close();
  });

  it("returns the feed's events and announces the call and its result under the run", async () => {
    const view = await call(system, { ...WINDOW, max_results: 5 }, "ics-1");
    expect(view).toMatchObject({ callId: "ics-1", status: "succeeded" });
    expect(view.result.data.events.map((e) => e.title)).toEqual([
      "Office hours",
      "Release party: Widget 2.0",
      "Winter hackathon",
      "Office hours (moved to Wednesday)",
      "Docs sprint kickoff",
    ]);
    expect(view.result.output).toContain("### Thu 22 Jan 2026");
    expect(view.result.citations.map((c) => c.url)).toContain(
      "https://acme.dev/events/release-party",
    );

    const events = await runEvents(system, view.parentRunId);
    expect(events.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(events[0]?.detail).toMatchObject({ toolId: "calendar", toolset: "calendar" });
    expect(events[1]?.detail).toMatchObject({
      callId: "ics-1",
      status: "succeeded",
      cached: false,
      data: {
        events: expect.arrayContaining([expect.objectContaining({ title: "Office hours" })]),
      },
    });
  });

  it("answers the same window from the cache: the feed is fetched once", async () => {
    const before = feed.requests.length;
    const first = await call(system, { ...WINDOW, max_results: 3 }, "cache-1");
    const second = await call(system, { ...WINDOW, max_results: 3 }, "cache-2");
    expect(feed.requests.length - before).toBe(1);
    expect(first.result.cached).toBe(false);
    expect(second.result).toMatchObject({ cached: true, output: first.result.output });
  });

  it("rejects a malformed window before scheduling anything", async () => {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: {
        tool: "calendar",
        input: { time_min: "2026-02-01T00:00:00Z", time_max: "2026-01-01" },
        wait: 5,
      },
    });
    expect(response.status).toBe(400);
    expect(await runEvents(system, runId)).toEqual([]);
  });
});

describe("calendar through the API, with a Google service account", () => {
  let system: TestToolbus;
  let google: GoogleStandIn;
  const account = makeServiceAccount("e2e-reader@toolbus-test.iam.gserviceaccount.com");

  beforeAll(async () => {
    google = await startGoogle({
      publicKey: account.publicKey,
      clientEmail: "e2e-reader@toolbus-test.iam.gserviceaccount.com",
      now: () => new Date(),
    });
    system = await startTestToolbus({
      tools,
      toolsets,
      capabilities,
      config: {
        outbound: { allowHosts: ["127.0.0.1"] },
        tools: {
          calendar: {
            calendarId: "team@group.calendar.google.com",
            apiBaseUrl: google.apiBaseUrl,
            tokenUrl: google.tokenUrl,
          },
        },
      },
      secrets: { GOOGLE_CALENDAR_CREDENTIALS: account.credentials },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await google?.close();
  });

  it("returns Google's events, never the key or the token, in results or events", async () => {
    const first = await call(system, { ...WINDOW, max_results: 10 }, "google-1");
    const second = await call(system, { ...WINDOW, max_results: 20 }, "google-2");
    expect(first.status).toBe("succeeded");
    expect(first.result.data.events.map((e) => `${e.source} ${e.title}`)).toEqual([
      "google Quarterly planning",
      "google Company holiday",
      "google Release party: Widget 2.0",
    ]);
    expect(second.status).toBe("succeeded");
    expect(google.tokenRequests()).toHaveLength(1);
    expect(google.refusals).toEqual([]);

    const events = await runEvents(system, first.parentRunId);
    expect(events.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    const capabilities = await (await system.request("/v1/capabilities")).text();
    expect(capabilities).toContain('"google_calendar"');
    const seen = [JSON.stringify([first, second, events]), capabilities];
    const keyLine = account.privateKeyPem.split("\n")[1] ?? "PRIVATE KEY";
    for (const text of seen) {
      for (const secret of [account.credentials, keyLine, ...google.issued]) {
        expect(text).not.toContain(secret);
      }
    }
  });
});
