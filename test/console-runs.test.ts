import { defineTool } from "@toolbus/core";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ConsoleStage,
  horizontalOverflow,
  seriousFindings,
  signedInPage,
  startConsoleStage,
  type WatchedPage,
} from "./support/console";
import { CONSOLE_TEST_TOOLSET, refuses } from "./support/console-tools";

/*
 * The console's runs pages in a real browser against a real stage: a run's timeline receives a
 * call's events and progress live, a slow call is cancelled from it, a pending call is approved
 * (from the approvals page) or denied (from the timeline), and the runs page lists a run that
 * had calls, derived from the stage's events.
 */

/** Opens a `test_steps` call's gate by call id: how a test lets the call finish. */
const gates = new Map<string, () => void>();

/** Reports one step of progress, then waits for the test to open its gate. */
const steps = defineTool({
  spec: {
    id: "test_steps",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Steps",
    description: "Reports progress, then finishes when the test says so.",
    category: "utility",
    usageHint: "tests",
    timeoutMs: 60_000,
  },
  input: z.object({ label: z.string() }),
  output: z.object({ label: z.string() }),
  async execute(input, context) {
    const opened = new Promise<void>((resolve) => gates.set(context.callId, resolve));
    context.progress(1, 2, "halfway there");
    await opened;
    return { output: `done with ${input.label}`, data: { label: input.label } };
  },
});

/** Works until cancelled (or `ms`), reporting progress as it goes. */
const slow = defineTool({
  spec: {
    id: "test_slow",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Slow",
    description: "Waits, reporting how long it has waited; stops when cancelled.",
    category: "utility",
    usageHint: "tests",
    timeoutMs: 60_000,
  },
  input: z.object({ ms: z.number().int().min(0).max(60_000) }),
  output: z.object({ slept: z.number() }),
  async execute(input, context) {
    const started = Date.now();
    while (Date.now() - started < input.ms) {
      if (context.signal.aborted) throw context.signal.reason;
      context.progress(Date.now() - started, input.ms, "working");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return { output: "slept", data: { slept: input.ms } };
  },
});

/** Needs a person's approval on this stage (see the config below). */
const guarded = defineTool({
  spec: {
    id: "test_guarded",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Guarded",
    description: "Runs only once a person approves it.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ word: z.string() }),
  output: z.object({ word: z.string() }),
  async execute(input) {
    return { output: `guarded ${input.word}`, data: { word: input.word } };
  },
});

let stage: ConsoleStage;
let member: { key: string; keyId: string };

beforeAll(async () => {
  stage = await startConsoleStage({
    tools: [...builtinTools, steps, slow, guarded, refuses],
    toolsets: [...builtinToolsets, CONSOLE_TEST_TOOLSET],
    config: { approvals: { rules: [{ tools: ["test_guarded"] }] } },
  });
  member = await stage.key("runs-member", "member");
}, 60_000);

afterAll(() => stage?.stop());

async function call(
  runId: string,
  body: { tool: string; input: unknown; callId: string; wait?: number },
  key = stage.system.adminKey,
) {
  const response = await stage.system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    key,
    json: { wait: 0, ...body },
  });
  expect([200, 202]).toContain(response.status);
  return (await response.json()) as { status: string };
}

async function status(runId: string, callId: string) {
  const response = await stage.system.request(`/v1/runs/${runId}/calls/${callId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { status: string; result?: { failure?: { kind: string } } };
}

/**
 * Signs in and opens a console page by its hash path, waiting for its heading. These pages
 * should cause no problem: no script error, refused load or API answer that is not a success.
 */
async function open(
  key: string,
  path: string,
  title: string,
  width?: number,
): Promise<WatchedPage> {
  const watched = await signedInPage(stage, key, width ? { width } : {});
  watched.page.setDefaultTimeout(15_000);
  await watched.page.evaluate(`location.hash = ${JSON.stringify(`#${path}`)}`);
  await watched.page.getByRole("heading", { level: 1, name: title }).waitFor();
  return watched;
}

/** Hands the run's event streams (not its JSON reads of events) to `answer`. */
async function routeStreams(
  page: Page,
  runId: string,
  answer: (route: Route) => Promise<void>,
): Promise<void> {
  await page.route(`**/v1/runs/${runId}/events*`, (route) =>
    (route.request().headers().accept ?? "").includes("text/event-stream")
      ? answer(route)
      : route.continue(),
  );
}

/**
 * Answers an event stream as a buffered answer on AWS does: the run's events after its
 * Last-Event-ID, the last one's id the cursor, and then its end. Returns that cursor.
 */
async function answerAtOnce(route: Route, runId: string): Promise<string> {
  const from = route.request().headers()["last-event-id"];
  const read = await stage.system.request(
    `/v1/runs/${runId}/events${from ? `?cursor=${encodeURIComponent(from)}` : ""}`,
  );
  const body = (await read.json()) as { events: { detailType: string }[]; cursor: string };
  const text = body.events
    .map(
      (event, index) =>
        `event: ${event.detailType}\ndata: ${JSON.stringify(event)}\n${
          index === body.events.length - 1 ? `id: ${body.cursor}\n` : ""
        }\n`,
    )
    .join("");
  await route.fulfill({
    status: 200,
    headers: { "content-type": "text/event-stream" },
    body: text,
  });
  return body.cursor;
}

const callCard = (page: Page, name: string) => page.getByRole("article", { name });

describe("a run's timeline", () => {
  it("receives a call's events and progress live, without a reload and without taking focus", async () => {
    const runId = stage.system.runId();
    const { page, problems } = await open(stage.system.adminKey, `/runs/${runId}`, `Run ${runId}`);
    await page.getByText("No calls in this run yet").waitFor();
    // A mark on this document: a reload would lose it.
    await page.evaluate("window.__notReloaded = true");
    const focused = () => page.evaluate("document.activeElement?.textContent");
    expect(await focused()).toBe(`Run ${runId}`);

    await call(runId, { tool: "test_steps", input: { label: "live" }, callId: "c1" });
    const card = callCard(page, "test_steps · c1");
    await card.waitFor();
    await card.getByText("Scheduled", { exact: true }).waitFor();
    await card.getByText("1 of 2 (50%): halfway there").first().waitFor();
    expect(await card.getByText("running", { exact: true }).isVisible()).toBe(true);
    // Live news never took the focus from the page's heading.
    expect(await focused()).toBe(`Run ${runId}`);
    // The admin may cancel a running call; the input is there to read.
    expect(await card.getByRole("button", { name: /^Cancel/ }).isVisible()).toBe(true);
    await card.getByText("Input", { exact: true }).click();
    await card.getByText('"label": "live"').waitFor();

    await expect.poll(() => gates.has("c1"), { timeout: 10_000 }).toBe(true);
    gates.get("c1")?.();
    await card.getByText("succeeded", { exact: true }).waitFor();
    await card.getByText("Succeeded", { exact: true }).waitFor();
    expect(await card.getByRole("button", { name: /^Cancel/ }).count()).toBe(0);
    // The input stayed open, and focused, through the updates.
    expect(await card.getByText('"label": "live"').isVisible()).toBe(true);
    expect(await focused()).toBe("Input");
    await card.getByText("Output", { exact: true }).click();
    await card.getByText("done with live").waitFor();

    // Announced politely; the page was never reloaded.
    await page
      .getByRole("status")
      .filter({ hasText: "test_steps call c1 succeeded" })
      .waitFor({ state: "attached" });
    expect(await page.evaluate("window.__notReloaded")).toBe(true);
    // The run's summary caught up with the finished call.
    await page.getByText("test_steps × 1").waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);

  it("cancels a slow call from the timeline and shows it end cancelled", async () => {
    const runId = stage.system.runId();
    await call(runId, { tool: "test_slow", input: { ms: 30_000 }, callId: "slow" });
    const { page, problems } = await open(stage.system.adminKey, `/runs/${runId}`, `Run ${runId}`);
    const card = callCard(page, "test_slow · slow");
    await card.getByText("working").first().waitFor();
    await card.getByRole("button", { name: /^Cancel/ }).click();
    await card.getByText("cancelled", { exact: true }).waitFor();
    await card.getByText("Cancelled", { exact: true }).waitFor();
    expect(await card.getByText("Recovery: replan; not retryable.").isVisible()).toBe(true);
    const stopped = await status(runId, "slow");
    expect(stopped.status).toBe("failed");
    expect(stopped.result?.failure?.kind).toBe("cancelled");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);

  it("reconnects from the last event id when the server ends the stream, and misses nothing", async () => {
    const runId = stage.system.runId();
    const { page, problems } = await open(stage.system.adminKey, "/runs", "Runs");
    // The first stream is answered here: the events so far, the cursor as the last one's id,
    // and then its end, as the API ends a stream after its maximum duration.
    let firstStream: (() => void) | undefined;
    const firstStreamAsked = new Promise<void>((resolve) => {
      firstStream = resolve;
    });
    let letFirstStreamEnd: (() => void) | undefined;
    const firstStreamMayEnd = new Promise<void>((resolve) => {
      letFirstStreamEnd = resolve;
    });
    const resumedFrom: (string | undefined)[] = [];
    let cursor: string | undefined;
    await routeStreams(page, runId, async (route) => {
      resumedFrom.push(route.request().headers()["last-event-id"]);
      if (resumedFrom.length > 1) return route.continue();
      firstStream?.();
      await firstStreamMayEnd;
      cursor = await answerAtOnce(route, runId);
    });
    await page.evaluate(`location.hash = ${JSON.stringify(`#/runs/${runId}`)}`);
    await page.getByText("No calls in this run yet").waitFor();
    await firstStreamAsked;
    await call(runId, { tool: "test_slow", input: { ms: 0 }, callId: "before", wait: 10 });
    await stage.system.settle();
    letFirstStreamEnd?.();
    const before = callCard(page, "test_slow · before");
    await before.getByText("Succeeded", { exact: true }).waitFor();

    // Resumed where the first stream ended; a call made now arrives on the new stream.
    await expect.poll(() => resumedFrom.length, { timeout: 10_000 }).toBe(2);
    expect(resumedFrom[0]).toBeUndefined();
    expect(resumedFrom[1]).toBe(cursor);
    await call(runId, { tool: "test_slow", input: { ms: 0 }, callId: "after", wait: 10 });
    await callCard(page, "test_slow · after").getByText("Succeeded", { exact: true }).waitFor();
    // Nothing was shown twice.
    expect(await before.getByText("Scheduled", { exact: true }).count()).toBe(1);
    expect(await page.getByRole("article").count()).toBe(2);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);

  it("says it updates every few seconds when each event answer ends at once (buffered), and still shows what happens", async () => {
    const runId = stage.system.runId();
    const { page, problems } = await open(stage.system.adminKey, "/runs", "Runs");
    // As on AWS, where an answer is buffered: each stream sends what there is and ends.
    let streams = 0;
    await routeStreams(page, runId, async (route) => {
      streams += 1;
      await answerAtOnce(route, runId);
    });
    await page.evaluate(`location.hash = ${JSON.stringify(`#/runs/${runId}`)}`);
    await page.getByText("No calls in this run yet").waitFor();
    await page
      .getByText("Updated every few seconds: new events appear shortly after they happen.")
      .waitFor();
    expect(streams).toBeGreaterThanOrEqual(2);
    expect(await page.getByText("Live: new events appear as they happen.").count()).toBe(0);
    await call(runId, { tool: "test_slow", input: { ms: 0 }, callId: "buffered", wait: 10 });
    await callCard(page, "test_slow · buffered").getByText("Succeeded", { exact: true }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);

  it("offers a viewer neither Cancel nor Approve, and fits a 390 px wide screen", async () => {
    const runId = stage.system.runId();
    await call(runId, { tool: "test_slow", input: { ms: 30_000 }, callId: "watched" });
    await call(runId, { tool: "test_guarded", input: { word: "x".repeat(300) }, callId: "held" });
    const viewer = await stage.key("runs-viewer", "viewer");
    const { page, problems } = await open(viewer.key, `/runs/${runId}`, `Run ${runId}`, 390);
    const running = callCard(page, "test_slow · watched");
    await running.getByText("working").first().waitFor();
    const held = callCard(page, "test_guarded · held");
    await held.getByText("awaiting approval", { exact: true }).waitFor();
    expect(await page.getByRole("button", { name: /^(Cancel|Approve|Deny)/ }).count()).toBe(0);
    expect(await page.getByRole("link", { name: "Approvals" }).count()).toBe(0);
    expect(await horizontalOverflow(page)).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
    expect(
      (await stage.system.request(`/v1/runs/${runId}/calls/watched/cancel`, { method: "POST" }))
        .status,
    ).toBe(202);
    expect(
      (await stage.system.request(`/v1/runs/${runId}/calls/held/cancel`, { method: "POST" }))
        .status,
    ).toBe(200);
  }, 45_000);

  it("offers a member Cancel on its own running call only", async () => {
    const runId = stage.system.runId();
    await call(runId, { tool: "test_slow", input: { ms: 30_000 }, callId: "mine" }, member.key);
    await call(runId, { tool: "test_slow", input: { ms: 30_000 }, callId: "theirs" });
    const { page, problems } = await open(member.key, `/runs/${runId}`, `Run ${runId}`);
    const mine = callCard(page, "test_slow · mine");
    const theirs = callCard(page, "test_slow · theirs");
    await mine.getByText("working").first().waitFor();
    await theirs.getByText("working").first().waitFor();
    expect(await theirs.getByRole("button").count()).toBe(0);
    await mine.getByRole("button", { name: /^Cancel/ }).click();
    await mine.getByText("cancelled", { exact: true }).waitFor();
    expect(await theirs.getByText("running", { exact: true }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
    const stopped = await stage.system.request(`/v1/runs/${runId}/calls/theirs/cancel`, {
      method: "POST",
    });
    expect(stopped.status).toBe(202);
  }, 45_000);

  it("denies a pending call from the timeline, which then fails as denied", async () => {
    const runId = stage.system.runId();
    const asked = await call(
      runId,
      { tool: "test_guarded", input: { word: "no" }, callId: "d1" },
      member.key,
    );
    expect(asked.status).toBe("awaiting_approval");
    const { page, problems } = await open(stage.system.adminKey, `/runs/${runId}`, `Run ${runId}`);
    const card = callCard(page, "test_guarded · d1");
    await card.getByText("Approval requested").waitFor();
    // With the keyboard alone: the reason, then past Approve to Deny.
    await card.getByLabel("Reason (optional)").fill("not today");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toMatch(/^Approve/);
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toMatch(/^Deny/);
    await page.keyboard.press("Enter");
    await card.getByText("Failed: denied").waitFor();
    // The buttons went with the decision; the focus went to the call, not to the page's end.
    expect(await card.getByRole("button").count()).toBe(0);
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("test_guarded · d1");
    await card.getByText("Denied by").waitFor();
    expect(await card.getByText("not today").count()).toBeGreaterThan(0);
    expect((await status(runId, "d1")).result?.failure?.kind).toBe("denied");
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);
});

describe("the approvals page", () => {
  it("lists a pending call with its input and who asked, and approving it lets it run", async () => {
    const runId = stage.system.runId();
    const asked = await call(
      runId,
      { tool: "test_guarded", input: { word: "please" }, callId: "a1" },
      member.key,
    );
    expect(asked.status).toBe("awaiting_approval");
    await stage.system.settle();
    const { page, problems } = await open(stage.system.adminKey, "/approvals", "Approvals");
    const card = page.getByRole("article", { name: "test_guarded · a1" });
    await card.waitFor();
    expect(await card.getByText('"word": "please"').isVisible()).toBe(true);
    expect(await card.getByText(`${member.keyId}`, { exact: false }).count()).toBeGreaterThan(0);
    await card.getByRole("button", { name: /^Approve/ }).click();
    await page.getByText("Approved test_guarded call a1").waitFor();
    expect(await card.count()).toBe(0);
    await expect.poll(async () => (await status(runId, "a1")).status).toBe("succeeded");

    await page.getByRole("link", { name: "Follow its run" }).click();
    await page.getByRole("heading", { level: 1, name: `Run ${runId}` }).waitFor();
    const timeline = callCard(page, "test_guarded · a1");
    await timeline.getByText("succeeded", { exact: true }).waitFor();
    await timeline.getByText("Approval requested").waitFor();
    await timeline.getByText("Scheduled", { exact: true }).waitFor();
    await timeline.getByText("Approved by").waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);
});

describe("the runs page", () => {
  it("lists a run that had calls, with its calls and failures, and opens it", async () => {
    const runId = stage.system.runId();
    await call(runId, { tool: "test_slow", input: { ms: 0 }, callId: "ok", wait: 10 });
    await call(runId, { tool: "test_refuses", input: {}, callId: "bad", wait: 10 });
    await stage.system.settle();
    const { page, problems } = await open(stage.system.adminKey, "/runs", "Runs");
    const row = page.getByRole("row").filter({ hasText: runId });
    await row.waitFor();
    expect(await row.getByRole("cell").nth(3).textContent()).toBe("Calls: 2");
    expect(await row.getByText("1 failed").isVisible()).toBe(true);
    expect(await row.getByText("test_refuses, test_slow").isVisible()).toBe(true);
    await row.getByRole("link", { name: runId }).click();
    await page.getByRole("heading", { level: 1, name: `Run ${runId}` }).waitFor();
    const failed = callCard(page, "test_refuses · bad");
    await failed.getByText("Failed: upstream_error").waitFor();
    expect(await failed.getByText("The upstream said no.").isVisible()).toBe(true);
    expect(await failed.getByText("Recovery: replan; retryable.").isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);

  it("adds a run that begins while the page is open, without a reload", async () => {
    const { page, problems } = await open(stage.system.adminKey, "/runs", "Runs");
    await page.getByText("Live: new runs and calls appear").waitFor();
    await page.evaluate("window.__notReloaded = true");
    const runId = stage.system.runId();
    await call(runId, { tool: "test_refuses", input: {}, callId: "late", wait: 10 });
    const row = page.getByRole("row").filter({ hasText: runId });
    await row.getByText("1 failed").waitFor();
    await page
      .getByRole("status")
      .filter({ hasText: `New run: ${runId}` })
      .waitFor({ state: "attached" });
    expect(await page.evaluate("window.__notReloaded")).toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);

  it("opens a run by its id from the form, and refuses an id that is not one", async () => {
    const { page, problems } = await open(stage.system.adminKey, "/runs", "Runs");
    await page.getByLabel("Run id").fill("not a run id");
    await page.getByRole("button", { name: "Open run" }).click();
    await page.getByRole("alert").getByText("A run id is").waitFor();
    await page.getByLabel("Run id").fill("run-by-hand");
    await page.getByLabel("Run id").press("Enter");
    await page.getByRole("heading", { level: 1, name: "Run run-by-hand" }).waitFor();
    await page.getByText("No calls in this run yet").waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  }, 45_000);
});

describe("the runs pages with content", () => {
  it("have no serious accessibility finding and no horizontal scroll, wide or on a phone", async () => {
    const runId = stage.system.runId();
    await call(runId, { tool: "test_refuses", input: {}, callId: "broken", wait: 10 });
    await call(
      runId,
      { tool: "test_guarded", input: { word: "a".repeat(400) }, callId: "held" },
      member.key,
    );
    // Settled before the slow call starts: settling waits for every call in flight to end.
    await stage.system.settle();
    await call(runId, { tool: "test_slow", input: { ms: 30_000 }, callId: "busy" });
    for (const width of [1280, 390]) {
      const { page, problems } = await open(
        stage.system.adminKey,
        `/runs/${runId}`,
        `Run ${runId}`,
        width,
      );
      await callCard(page, "test_slow · busy").getByText("working").first().waitFor();
      await callCard(page, "test_guarded · held").getByText("Approval requested").waitFor();
      await callCard(page, "test_refuses · broken").getByText("Failed: upstream_error").waitFor();
      await callCard(page, "test_refuses · broken").getByText("Input", { exact: true }).click();
      const pages = [
        ["run", async () => undefined],
        [
          "approvals",
          async () => {
            await page.evaluate('location.hash = "#/approvals"');
            await page.getByRole("article", { name: "test_guarded · held" }).waitFor();
          },
        ],
        [
          "runs",
          async () => {
            await page.evaluate('location.hash = "#/runs"');
            await page.getByRole("row").filter({ hasText: runId }).waitFor();
          },
        ],
      ] as const;
      for (const [name, reach] of pages) {
        await reach();
        expect({ name, width, findings: await seriousFindings(page) }).toEqual({
          name,
          width,
          findings: [],
        });
        expect({
          name,
          width,
          overflow: await horizontalOverflow(page),
        }).toEqual({ name, width, overflow: 0 });
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }
    await stage.system.request(`/v1/runs/${runId}/calls/busy/cancel`, { method: "POST" });
    await stage.system.request(`/v1/runs/${runId}/calls/held/cancel`, { method: "POST" });
  }, 60_000);
});
