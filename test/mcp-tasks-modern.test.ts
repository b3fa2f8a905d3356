import { randomBytes, randomUUID } from "node:crypto";
import { DeleteTableCommand } from "@aws-sdk/client-dynamodb";
import { CreateEventBusCommand } from "@aws-sdk/client-eventbridge";
import {
  createToolbus,
  type Deployment,
  ensureTable,
  parseStageConfig,
  type Toolbus,
} from "@toolbus/core";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { LocalEventBus, localEventBridgeClient } from "@toolbus/local/bus";
import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "./support/dynamodb";
import type { Loopback } from "./support/loopback";
import { registeredMcpDispatcher } from "./support/registered-function";
import { FIXTURE_TASK_SUPPORT, startTasksFixtureServer } from "./support/tasks-fixture-server";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The MCP Tasks extension on 2026-07-28, spoken by hand over HTTP (the second-generation SDK
// client cannot receive a task): a task is a Toolbus call, recorded before the task is
// answered, read, cancelled and answered through /mcp.

const EXTENSION = "io.modelcontextprotocol/tasks";
const PROTOCOL = "2026-07-28";

let fixture: Loopback;
let system: TestToolbus;
let api: ApiServer;
let viewerKey: string;

beforeAll(async () => {
  fixture = await startTasksFixtureServer();
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  const registered = await system.request("/v1/registered-toolsets/tasks_fixture", {
    method: "PUT",
    json: {
      kind: "mcp",
      name: "tasks_fixture",
      description: "Tools the Tasks extension's scenarios call",
      owner: "team-tasks",
      url: fixture.url,
      defaults: { timeoutMs: 120_000, taskSupport: FIXTURE_TASK_SUPPORT },
    },
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  const created = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "someone-else", role: "member" },
  });
  viewerKey = ((await created.json()) as { key: string }).key;
  api = await serveApi(system.app, { port: 0 });
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
  await fixture?.close();
});

interface RpcOptions {
  key?: string;
  /** The API to ask (default: the in-process stage's). */
  url?: string;
  /** Declare the extension in this request's capabilities (default: yes). */
  tasks?: boolean;
}

type Answer = { result?: Record<string, unknown>; error?: { code: number; data?: unknown } };

/** One JSON-RPC request to /mcp as a 2026-07-28 client sends it: headers and `_meta` envelope. */
async function rpc(
  method: string,
  params: Record<string, unknown>,
  options: RpcOptions = {},
): Promise<Answer> {
  const name = params.taskId ?? params.name;
  const response = await fetch(`${options.url ?? api.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${options.key ?? system.adminKey}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL,
      "mcp-method": method,
      ...(typeof name === "string" ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": PROTOCOL,
          "io.modelcontextprotocol/clientInfo": { name: "tasks-test", version: "1" },
          "io.modelcontextprotocol/clientCapabilities":
            options.tasks === false ? {} : { elicitation: {}, extensions: { [EXTENSION]: {} } },
        },
      },
    }),
  });
  const body = await response.text();
  // JSON, or an event stream whose last data line is the answer.
  const json = response.headers.get("content-type")?.includes("text/event-stream")
    ? (body
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => JSON.parse(line.slice(5)) as Answer & { id?: unknown })
        .find((message) => message.id === 1) ?? {})
    : (JSON.parse(body) as Answer);
  return json;
}

async function startTask(name: string, args: Record<string, unknown>) {
  const { result, error } = await rpc("tools/call", { name, arguments: args });
  expect(error).toBeUndefined();
  expect(result?.resultType).toBe("task");
  return result as { taskId: string; status: string; createdAt: string; ttlMs: unknown };
}

async function getTask(taskId: string, options?: RpcOptions) {
  return rpc("tasks/get", { taskId }, options);
}

/** Polls tasks/get until the task is in one of `statuses`. */
async function waitFor(
  taskId: string,
  statuses: readonly string[],
  ms = 10_000,
  options?: RpcOptions,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const { result } = await getTask(taskId, options);
    if (result && statuses.includes(String(result.status))) return result;
    if (Date.now() > deadline) throw new Error(`task never reached ${statuses}: ${result?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Polls tasks/get until the task asks `count` questions at once: a server's requests made
 * together reach the relay one by one, and `tasks/get` shows each as soon as it is there.
 */
async function waitForQuestions(taskId: string, count: number, options?: RpcOptions) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { result } = await getTask(taskId, options);
    const asked = Object.keys((result?.inputRequests as object | undefined) ?? {});
    if (result?.status === "input_required" && asked.length >= count) return asked;
    if (Date.now() > deadline) throw new Error(`task never asked ${count}: ${result?.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The Toolbus call a task is, over REST: run and call id from the task result's `_meta`. */
async function callOf(result: Record<string, unknown>) {
  const meta = (result.result as { _meta: Record<string, string> })._meta;
  return { runId: meta["toolbus/runId"], callId: meta["toolbus/callId"] };
}

describe("a task-capable tool called with the Tasks extension", () => {
  it("answers with a task whose call is already recorded, then completes it with the result", async () => {
    const task = await startTask("slow_compute", { seconds: 1, label: "recorded" });
    expect(task.status).toBe("working");
    expect(task.ttlMs).toBeNull();
    // Flat, as the extension shapes it: no v1 `task` wrapper, nothing of a finished task.
    for (const key of ["task", "result", "error", "inputRequests", "requestState", "ttl"]) {
      expect(task).not.toHaveProperty(key);
    }
    // The task's call exists before the tool is done: tasks/get reads it at once.
    const working = await getTask(task.taskId);
    expect(working.result?.status).toBe("working");
    expect(working.result?.taskId).toBe(task.taskId);
    const done = await waitFor(task.taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect(done.resultType).toBe("complete");
    const content = (done.result as { content: Array<{ text: string }> }).content;
    expect(content[0]?.text).toBe("recorded: done after 1s");
    const { runId, callId } = await callOf(done);
    const call = await system.request(`/v1/runs/${runId}/calls/${callId}`);
    expect(call.status).toBe(200);
    expect(((await call.json()) as { status: string }).status).toBe("succeeded");
  });

  it("is cancelled: the call ends cancelled, with its result recorded in the run", async () => {
    const task = await startTask("slow_compute", { seconds: 60, label: "cancelled" });
    const cancelled = await rpc("tasks/cancel", { taskId: task.taskId });
    expect(cancelled.result).toEqual(expect.objectContaining({ resultType: "complete" }));
    expect(Object.keys(cancelled.result ?? {}).filter((key) => key !== "_meta")).toEqual([
      "resultType",
    ]);
    const ended = await waitFor(task.taskId, ["completed", "failed", "cancelled"]);
    expect(ended.status).toBe("cancelled");
    // Cancelling a task already over is acknowledged all the same.
    const again = await rpc("tasks/cancel", { taskId: task.taskId });
    expect(again.result?.resultType).toBe("complete");
    const [runId, callId] = JSON.parse(
      Buffer.from(task.taskId.slice("toolbus.task.".length), "base64url").toString(),
    ) as [string, string];
    const call = (await (await system.request(`/v1/runs/${runId}/calls/${callId}`)).json()) as {
      status: string;
      result: { failure: { kind: string } };
    };
    expect(call.status).toBe("failed");
    expect(call.result.failure.kind).toBe("cancelled");
    await system.settle();
    const events = await system.events(runId);
    expect(events.map((event) => event.detailType)).toContain("ToolResultReceived");
  });

  it("is neither read nor cancelled with another key", async () => {
    const task = await startTask("slow_compute", { seconds: 60, label: "private" });
    const read = await getTask(task.taskId, { key: viewerKey });
    expect(read.error?.code).toBe(-32602);
    const cancel = await rpc("tasks/cancel", { taskId: task.taskId }, { key: viewerKey });
    expect(cancel.error?.code).toBe(-32602);
    expect((await getTask(task.taskId)).result?.status).toBe("working");
    await rpc("tasks/cancel", { taskId: task.taskId });
  });

  it("shows what the server asks as input requests, and goes on once they are answered", async () => {
    const task = await startTask("multi_input", {});
    const keys = await waitForQuestions(task.taskId, 2);
    expect(keys).toHaveLength(2);
    const first = keys[0] as string;
    const ack = await rpc("tasks/update", {
      taskId: task.taskId,
      inputResponses: { [first]: { action: "accept", content: { name: "Ada", confirm: true } } },
    });
    expect(ack.error).toBeUndefined();
    expect(ack.result?.resultType).toBe("complete");
    const still = await getTask(task.taskId);
    expect(still.result?.status).toBe("input_required");
    expect(Object.keys(still.result?.inputRequests as object)).toEqual([keys[1]]);
    await rpc("tasks/update", {
      taskId: task.taskId,
      inputResponses: { [keys[1] as string]: { action: "accept", content: { confirm: true } } },
    });
    const done = await waitFor(task.taskId, ["completed", "failed", "cancelled"]);
    expect(done.status).toBe("completed");
    expect((done.result as { content: Array<{ text: string }> }).content[0]?.text).toBe(
      "answers: accept, accept",
    );
  });

  it("resolves what the server asks before the task exists as a round, then answers with the task", async () => {
    const round = await rpc("tools/call", { name: "test_tool_with_task", arguments: {} });
    expect(round.result?.resultType).toBe("input_required");
    expect(round.result?.taskId).toBeUndefined();
    const [key] = Object.keys(round.result?.inputRequests as object);
    const retried = await rpc("tools/call", {
      name: "test_tool_with_task",
      arguments: {},
      inputResponses: { [key as string]: { action: "accept", content: { name: "Alice" } } },
      requestState: round.result?.requestState,
    });
    expect(retried.result?.resultType).toBe("task");
    expect(retried.result).not.toHaveProperty("requestState");
    const done = await waitFor(String(retried.result?.taskId), [
      "completed",
      "failed",
      "cancelled",
    ]);
    expect((done.result as { content: Array<{ text: string }> }).content[0]?.text).toBe(
      "Hello, Alice!",
    );
  });

  it("refuses tasks/get whose Mcp-Name names another task, with -32020", async () => {
    const task = await startTask("slow_compute", { seconds: 60, label: "headers" });
    const response = await fetch(`${api.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${system.adminKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": "tasks/get",
        "mcp-name": "some-other-task",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tasks/get",
        params: {
          taskId: task.taskId,
          _meta: {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientCapabilities": { extensions: { [EXTENSION]: {} } },
          },
        },
      }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Answer).error?.code).toBe(-32020);
    await rpc("tasks/cancel", { taskId: task.taskId });
  });

  it("answers a tool error as a completed task, and a server's JSON-RPC error as a failed one", async () => {
    const toolError = await startTask("failing_job", {});
    const completed = await waitFor(toolError.taskId, ["completed", "failed", "cancelled"]);
    expect(completed.status).toBe("completed");
    expect((completed.result as { isError: boolean }).isError).toBe(true);
    const protocolError = await startTask("protocol_error_job", {});
    const failed = await waitFor(protocolError.taskId, ["completed", "failed", "cancelled"]);
    expect(failed.status).toBe("failed");
    expect(failed.result).toBeUndefined();
    expect(failed.error).toEqual(expect.objectContaining({ code: -32603 }));
  });
});

describe("without the Tasks extension", () => {
  it("refuses a tool that runs only as a task with -32021, naming the extension", async () => {
    const { error } = await rpc(
      "tools/call",
      { name: "failing_job", arguments: {} },
      { tasks: false },
    );
    expect(error?.code).toBe(-32021);
    expect(error?.data).toEqual({ requiredCapabilities: { extensions: { [EXTENSION]: {} } } });
  });

  it("runs an optional tool synchronously, and refuses the tasks methods", async () => {
    const { result } = await rpc(
      "tools/call",
      { name: "slow_compute", arguments: { seconds: 0, label: "sync" } },
      { tasks: false },
    );
    expect(result?.resultType).toBe("complete");
    expect(result?.taskId).toBeUndefined();
    for (const method of ["tasks/get", "tasks/cancel"]) {
      const refused = await rpc(method, { taskId: "anything" }, { tasks: false });
      expect(refused.error?.code, method).toBe(-32021);
    }
  });

  it("answers an unknown task id with -32602, and tasks/result and tasks/list with -32601", async () => {
    expect((await getTask("toolbus.task.nothing")).error?.code).toBe(-32602);
    expect((await rpc("tasks/result", { taskId: "x" })).error?.code).toBe(-32601);
    expect((await rpc("tasks/list", {})).error?.code).toBe(-32601);
  });
});

// On AWS the tool runs in its own function and the relay goes through the stage's table: a
// task's questions wait there for the caller's tasks/get and tasks/update, on any instance,
// through API Gateway too (it buffers answers, and a task needs none streamed).
describe("a task whose server asks, with the relay through the table (AWS)", () => {
  const tableName = `toolbus-tasks-aws-${randomUUID().slice(0, 8)}`;
  const busName = "toolbus-tasks-aws";
  const awsKey = `test-admin-${randomBytes(18).toString("base64url")}`;
  const dynamodb = testDynamoDbClient();
  const awsBus = new LocalEventBus({ delivery: { baseDelayMs: 5, maxDelayMs: 50 } });
  const eventBridge = localEventBridgeClient({ bus: awsBus });
  const deployment = (): Deployment => ({
    config: parseStageConfig({ outbound: { allowHosts: ["127.0.0.1"] } }),
    tableName,
    busName,
    adminKey: awsKey,
    dynamodb,
    eventBridge,
  });
  let stage: Toolbus;
  let awsApi: ApiServer;
  const onAws = (): RpcOptions => ({ url: awsApi.url, key: awsKey });

  beforeAll(async () => {
    await ensureTable(dynamodb, tableName);
    await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
    // functions/registered/mcp.ts, on its own deployment, invoked as Lambda would be.
    const dispatcher = registeredMcpDispatcher(deployment);
    stage = createToolbus(
      deployment(),
      { tools: builtinTools, toolsets: builtinToolsets, capabilities: builtinCapabilities },
      { dispatcher },
    );
    await stage.seed();
    awsApi = await serveApi(
      createApi({ ...stage.apiDeps, followBuffered: true, allowedHosts: "any" }),
      { port: 0 },
    );
    const registered = await fetch(`${awsApi.url}/v1/registered-toolsets/tasks_fixture`, {
      method: "PUT",
      headers: { authorization: `Bearer ${awsKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        kind: "mcp",
        name: "tasks_fixture",
        description: "Tools the Tasks extension's scenarios call",
        owner: "team-tasks",
        url: fixture.url,
        defaults: { timeoutMs: 60_000, taskSupport: FIXTURE_TASK_SUPPORT },
      }),
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await awsApi?.close();
    await stage?.settled();
    await awsBus.drain();
    awsBus.close();
    await dynamodb.send(new DeleteTableCommand({ TableName: tableName }));
  });

  it("shows both questions, takes one answer at a time, and completes", async () => {
    const created = await rpc("tools/call", { name: "multi_input", arguments: {} }, onAws());
    expect(created.result?.resultType).toBe("task");
    const taskId = String(created.result?.taskId);
    const keys = await waitForQuestions(taskId, 2, onAws());
    expect(keys).toHaveLength(2);
    await rpc(
      "tasks/update",
      { taskId, inputResponses: { [keys[0] as string]: { action: "accept", content: {} } } },
      onAws(),
    );
    const still = await getTask(taskId, onAws());
    expect(Object.keys(still.result?.inputRequests as object)).toEqual([keys[1]]);
    await rpc(
      "tasks/update",
      { taskId, inputResponses: { [keys[1] as string]: { action: "decline" } } },
      onAws(),
    );
    const done = await waitFor(taskId, ["completed", "failed", "cancelled"], 10_000, onAws());
    expect(done.status).toBe("completed");
    expect((done.result as { content: Array<{ text: string }> }).content[0]?.text).toBe(
      "answers: accept, decline",
    );
  }, 30_000);
});
