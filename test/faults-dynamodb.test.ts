import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { createSweeper, type Toolbus } from "@toolbus/core";
import { createLogger } from "@toolbus/core/observability";
import { type ApiServer, composeLocalToolbus, serveApi } from "@toolbus/local";
import { LocalEventBus, localEventBridgeClient } from "@toolbus/local/bus";
import {
  type DynamoDbLocal,
  localDynamoDbClient,
  startDynamoDbLocal,
} from "@toolbus/local/dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HttpTarget, inParallel, requestJson } from "./support/http-calls";

const TEXT = "The data store went away. Then it came back.";
const TERMINAL = new Set(["succeeded", "failed"]);
const COHERENT = new Set(["pending", "running", "succeeded", "failed"]);

interface CallBody {
  callId?: string;
  status?: string;
  result?: unknown;
  error?: { code?: string };
}

/**
 * DynamoDB Local (our own instance, on disk) stopped while calls are in flight, then
 * restarted on the same port with the same files.
 */
describe("DynamoDB Local stopped mid-run", () => {
  let dbPath: string;
  let db: DynamoDbLocal | undefined;
  let dynamodb: DynamoDBClient;
  let bus: LocalEventBus;
  let eventBridge: ReturnType<typeof localEventBridgeClient>;
  let server: ApiServer;
  let target: HttpTarget;
  const runId = `run-faults-${Date.now()}`;
  let toolbus: Toolbus;
  let app: Parameters<typeof serveApi>[0];

  beforeAll(async () => {
    dbPath = await mkdtemp(join(tmpdir(), "toolbus-faults-"));
    db = await startDynamoDbLocal({ dbPath });
    // Short SDK timeouts and one attempt: an outage must surface quickly, never as a hang.
    dynamodb = localDynamoDbClient(db.endpoint, {
      maxAttempts: 1,
      requestHandler: {
        connectionTimeout: 500,
        requestTimeout: 2_000,
        throwOnRequestTimeout: true,
      },
    });
    // Enough bus retries to outlive the outage, as EventBridge's day of retries does.
    bus = new LocalEventBus({
      delivery: { baseDelayMs: 100, maxDelayMs: 1_000 },
      defaultMaxRetries: 40,
    });
    eventBridge = localEventBridgeClient({ bus });
    const adminKey = "faults-admin-key-0123456789abcdef";
    ({ toolbus, app } = await composeLocalToolbus({
      dynamodb,
      eventBridge,
      bus,
      tableName: "toolbus-faults",
      busName: "toolbus-faults",
      adminKey,
      // The API logs every 503 it answers; the outage makes dozens on purpose.
      log: createLogger({ service: "toolbus", sink: () => undefined }),
    }));
    server = await serveApi(app, { port: 0 });
    target = { url: server.url, key: adminKey };
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    bus?.close();
    eventBridge?.destroy();
    dynamodb?.destroy();
    await db?.stop();
    if (dbPath) await rm(dbPath, { recursive: true, force: true });
  }, 30_000);

  const post = (callId: string, wait: number) =>
    requestJson(target, `/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId, wait },
      timeoutMs: 15_000,
    });

  it("answers 503 unavailable (never 500, never a hang), leaves nothing half-written, and every accepted call can be finished after a restart", async () => {
    const running = db as DynamoDbLocal;
    const { port } = running;

    // A healthy call first, as the control case.
    const first = await post("call-before", 5);
    expect(first.status).toBe(200);
    expect((first.body as CallBody).status).toBe("succeeded");

    // 40 calls in flight; DynamoDB Local is stopped while they run.
    const inFlightIds = Array.from({ length: 40 }, (_, i) => `call-inflight-${i}`);
    const inFlight = Promise.all(inFlightIds.map((id) => post(id, 5)));
    await new Promise((resolve) => setTimeout(resolve, 60));
    await running.stop();
    const inFlightAnswers = await inFlight;

    // New calls and reads while it is down.
    const downIds = Array.from({ length: 10 }, (_, i) => `call-down-${i}`);
    const downAnswers = await Promise.all(downIds.map((id) => post(id, 5)));
    const read = await requestJson(target, `/v1/runs/${runId}/calls/call-before`);
    expect(read.status).toBe(503);
    expect(read.body).toMatchObject({ error: { code: "unavailable" } });

    for (const { status, body } of [...inFlightAnswers, ...downAnswers]) {
      expect([200, 202, 503]).toContain(status);
      if (status === 503) expect(body).toMatchObject({ error: { code: "unavailable" } });
    }
    for (const { status, body } of downAnswers) {
      expect(status).toBe(503);
      expect(body).toMatchObject({ error: { code: "unavailable" } });
    }
    const refused = inFlightAnswers.filter((a) => a.status === 503).length;
    expect(refused).toBeGreaterThan(0);

    // Restart on the same port with the same files.
    db = await startDynamoDbLocal({ dbPath, port });

    // Nothing half-written: every call is absent or a coherent record.
    const allIds = ["call-before", ...inFlightIds, ...downIds];
    for (const id of allIds) {
      const { status, body } = await requestJson(target, `/v1/runs/${runId}/calls/${id}`);
      expect([200, 404], id).toContain(status);
      if (status === 200) {
        const call = body as CallBody;
        expect(COHERENT.has(call.status ?? ""), `${id}: ${call.status}`).toBe(true);
        if (TERMINAL.has(call.status ?? "")) expect(call.result, id).toBeDefined();
      }
    }

    // Re-POSTing the same callId finishes every call that was pending (announced again). A call
    // whose handler had claimed it (RUNNING) when the store went away cannot be finished this
    // way: re-POSTing only republishes PENDING calls, and a redelivery finds it claimed. It
    // stays RUNNING until its deadline, for the sweeper to fail as `timeout`.
    const unfinished: string[] = [];
    const leftRunning: string[] = [];
    await inParallel(allIds.length, 8, async (i) => {
      const id = allIds[i] as string;
      const deadline = Date.now() + 30_000;
      let last: { status: number; body: unknown } | undefined;
      while (Date.now() < deadline) {
        last = await post(id, 5);
        const status = (last.body as CallBody).status;
        if (last.status === 200 && TERMINAL.has(status ?? "")) return;
        if (status === "running" && Date.now() > deadline - 25_000) {
          leftRunning.push(id);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      unfinished.push(`${id}: ${last?.status} ${JSON.stringify(last?.body)}`);
    });
    expect(unfinished).toEqual([]);
    expect(leftRunning.length).toBeLessThan(allIds.length);

    // The calls left RUNNING are the sweeper's: once past their deadline it fails them as
    // timeouts and announces them. Run it as if that time had come.
    const later = new Date(Date.now() + 10 * 60_000);
    await createSweeper(() => ({
      calls: toolbus.stores.calls,
      bus: toolbus.publisher,
      now: () => later,
    }))();
    for (const id of leftRunning) {
      const { body } = await requestJson(target, `/v1/runs/${runId}/calls/${id}`);
      expect(body, id).toMatchObject({
        status: "failed",
        result: { failure: { kind: "timeout" } },
      });
    }
    await bus.drain();
  }, 120_000);
});
