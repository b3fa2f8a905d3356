import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countByCall, readRunEvents, requestJson } from "./support/http-calls";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const TOTAL = 2_000;
const CLIENTS = 32;
const TEXT = "Toolbus serves optional tools to AI agents. Every call is announced on the bus.";

/**
 * 2,000 calls from 32 concurrent clients over real HTTP. No timing assertions: the figures
 * live in bench/load.ts. The calls are accepted with wait: 0 and the bus is drained, so the
 * test does not spend its time polling; each client has its own run.
 */
describe("load: 2,000 calls from 32 clients over HTTP", () => {
  let system: TestToolbus;
  let server: ApiServer;
  beforeAll(async () => {
    system = await startTestToolbus();
    server = await serveApi(system.app, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await system?.stop();
  });

  it("never answers 5xx, finishes every call, and logs exactly one Scheduled and one Received per call", async () => {
    const target = { url: server.url, key: system.adminKey };
    const runs = Array.from({ length: CLIENTS }, () => system.runId());
    const accepted: Array<{ runId: string; callId: string }> = [];
    const statuses = new Map<number, number>();

    let next = 0;
    await Promise.all(
      runs.map(async (runId) => {
        while (next < TOTAL) {
          const i = next++;
          const { status, body } = await requestJson(target, `/v1/runs/${runId}/calls`, {
            method: "POST",
            json: { tool: "readability_analyzer", input: { text: `${TEXT} #${i}` }, wait: 0 },
            timeoutMs: 30_000,
          });
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          const callId = (body as { callId?: string }).callId;
          if (typeof callId === "string") accepted.push({ runId, callId });
        }
      }),
    );
    expect([...statuses.keys()].filter((status) => status >= 500)).toEqual([]);
    expect(accepted).toHaveLength(TOTAL);

    await system.settle();
    expect(system.bus.deadLetters()).toEqual([]);

    // Every call has exactly one of each event in its run's log, read page by page, and its
    // ToolResultReceived says it succeeded.
    const problems: string[] = [];
    for (const runId of runs) {
      const events = await readRunEvents(target, runId, 50);
      const counts = countByCall(events);
      const ok = new Set(
        events
          .filter((e) => e.detailType === "ToolResultReceived" && e.detail.status === "succeeded")
          .map((e) => e.detail.callId),
      );
      const mine = accepted.filter((call) => call.runId === runId);
      for (const { callId } of mine) {
        const seen = counts.get(callId) ?? {};
        if (seen.ToolCallScheduled !== 1 || seen.ToolResultReceived !== 1 || !ok.has(callId)) {
          problems.push(`${runId}/${callId}: ${JSON.stringify(seen)}`);
        }
      }
      if (counts.size !== mine.length) problems.push(`${runId}: ${counts.size} calls in the log`);
    }
    expect(problems).toEqual([]);
  }, 600_000);
});
