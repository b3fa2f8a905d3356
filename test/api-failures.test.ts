import { createServer } from "node:net";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { createToolbus, parseStageConfig } from "@toolbus/core";
import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { createApi } from "@toolbus/http";
import { localDynamoDbClient } from "@toolbus/local/dynamodb";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SelectionService } from "../packages/core/src/app/selection/service";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system.stop());

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 1;
}

/** A logger whose lines the test reads (and nothing prints). */
function capturedLog() {
  const lines: LogRecord[] = [];
  return { lines, log: createLogger({ service: "toolbus", sink: (line) => lines.push(line) }) };
}

describe("when a dependency or the code fails", () => {
  it("answers 503 unavailable with Retry-After when DynamoDB cannot be reached", async () => {
    const { lines, log } = capturedLog();
    const port = await closedPort();
    const endpoint = `http://127.0.0.1:${port}`;
    const adminKey = "unreachable-admin-key-0123456789";
    const offline = createToolbus(
      {
        config: parseStageConfig({}),
        tableName: "toolbus-unreachable",
        busName: "toolbus-unreachable",
        adminKey,
        dynamodb: localDynamoDbClient(endpoint, { maxAttempts: 1 }),
        eventBridge: new EventBridgeClient({
          region: "us-east-1",
          endpoint,
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
          maxAttempts: 1,
        }),
        log,
      },
      { tools: builtinTools, toolsets: builtinToolsets },
    );
    const app = createApi(offline.apiDeps);

    for (const key of [adminKey, "tbk_0123456789abcdef_some-member-key"]) {
      const response = await app.request("/v1/tools", {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({
        error: { code: "unavailable", message: expect.any(String) },
      });
      expect(text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|toolbus-unreachable|stack/);
    }
    // The keys were never written to the log.
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(adminKey);
    expect(JSON.stringify(lines)).not.toContain("some-member-key");
  });

  it("answers a bug with a generic 500, logging it without the key", async () => {
    const { lines, log } = capturedLog();
    const deps = system.toolbus.apiDeps;
    const broken = {
      ...deps.catalog,
      getTool: deps.catalog.getTool.bind(deps.catalog),
      list: () => {
        throw new TypeError("Cannot read properties of undefined at /srv/secret.ts:1:2");
      },
    };
    // The catalog's readers are built with it: the selection lists the tools.
    const app = createApi({
      ...deps,
      log,
      catalog: broken,
      selection: new SelectionService({
        config: deps.config,
        catalog: broken,
        capabilities: deps.capabilities,
      }),
    });
    const response = await app.request("/v1/tools", {
      headers: { authorization: `Bearer ${system.adminKey}`, "x-request-id": "bug-1" },
    });
    expect(response.status).toBe(500);
    expect(response.headers.get("x-request-id")).toBe("bug-1");
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: "internal", message: "Something went wrong on our side; retry later." },
    });
    expect(text).not.toMatch(/TypeError|secret|\.ts/);

    expect(lines).toContainEqual(
      expect.objectContaining({ level: "ERROR", message: "request failed", requestId: "bug-1" }),
    );
    const logged = JSON.stringify(lines);
    expect(logged).toContain("bug-1");
    expect(logged).toContain("TypeError");
    expect(logged).not.toContain(system.adminKey);
  });

  it("ends an event stream with an error event when the log fails mid-stream", async () => {
    const { log } = capturedLog();
    const events = system.toolbus.apiDeps.events;
    let reads = 0;
    const app = createApi({
      ...system.toolbus.apiDeps,
      log,
      followIntervalMs: 10,
      events: {
        append: (call, entries) => events.append(call, entries),
        read: (runId, options) => {
          reads++;
          if (reads > 2) return Promise.reject(new Error("socket hang up at internal.ts:9:9"));
          return events.read(runId, options);
        },
      },
    });
    const response = await app.request(`/v1/runs/${system.runId()}/events`, {
      headers: { authorization: `Bearer ${system.adminKey}`, accept: "text/event-stream" },
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain("event: error");
    expect(text).toContain('"code":"internal"');
    expect(text).not.toMatch(/socket hang up|internal\.ts/);
  });
});
