import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { describe, expect, it, vi } from "vitest";
import { parseStageConfig } from "../config";
import type { Deployment } from "../deployment";
import type { HttpClient } from "../outbound/types";
import { testDetector as detector, testTool as tool } from "../testing";
import { declaredToolDeps, toolEntry } from "./tool-entry";

// Clients are made, never used: nothing here sends a request.
const deployment: Deployment = {
  config: parseStageConfig({ stage: "entry" }),
  tableName: "entry-table",
  busName: "entry-bus",
  dynamodb: new DynamoDBClient({
    region: "us-east-1",
    endpoint: "http://127.0.0.1:9",
    credentials: { accessKeyId: "x", secretAccessKey: "x" },
  }),
  secret: () => undefined,
};

const network = detector("network");
const serving = detector("backup");
const made: HttpClient = { request: async () => ({}) as never };
const makeClient = vi.fn(() => made);
const backup = tool("backup", { detectors: [serving] });
const primary = tool("primary", { detectors: [network], fallback: backup, network: makeClient });
const offline = tool("offline", { detectors: [] });

describe("declaredToolDeps", () => {
  it("gives a tool its own detectors and fallback, with its fallback's", () => {
    const deps = declaredToolDeps(primary.needs, deployment);
    expect(deps.capabilities).toEqual([network, serving]);
    expect([...(deps.fallbacks?.entries() ?? [])]).toEqual([["backup", backup]]);
  });

  it("reaches the network through the declared client, or the process's where it has one", () => {
    expect(declaredToolDeps(primary.needs, deployment).http).toBe(made);
    expect(makeClient).toHaveBeenCalledWith(deployment.config.outbound);
    const shared: HttpClient = { request: async () => ({}) as never };
    expect(declaredToolDeps(primary.needs, deployment, { http: shared }).http).toBe(shared);
  });

  it("refuses every request of a tool that does not reach the network, even with a client at hand", async () => {
    const shared: HttpClient = { request: async () => ({}) as never };
    const deps = declaredToolDeps(offline.needs, deployment, { http: shared });
    expect(deps.capabilities).toEqual([]);
    expect(deps.fallbacks?.size).toBe(0);
    await expect(deps.http.request("https://example.com/")).rejects.toMatchObject({
      kind: "blocked",
    });
  });
});

describe("toolEntry", () => {
  it("loads the function's secrets before it handles an event", async () => {
    const secrets = vi.fn(async () => undefined);
    const handler = toolEntry(tool("secretive", { detectors: [], secrets }));
    // Not a ToolCallScheduled event (or no deployment in this environment): it is refused,
    // but only after the secrets were asked for.
    await expect(handler({ "detail-type": "Something else" })).rejects.toThrow();
    expect(secrets).toHaveBeenCalledTimes(1);
  });
});
