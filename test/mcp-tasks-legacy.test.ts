import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  RELATED_TASK_META_KEY,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { defineTool } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { callOfTaskId } from "../packages/core/src/app/calls/tasks";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import {
  DynamoTaskIndex,
  taskPartition,
  taskSortKey,
} from "../packages/core/src/store/dynamodb/task-index";
import { testDynamoDbClient } from "./support/dynamodb";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * MCP 2025-11-25 tasks through /mcp with the official v1 client: a task is a Toolbus call,
 * recorded before the answer, polled, read with tasks/result, listed for its caller only,
 * cancelled; and MCP cancellation (notifications/cancelled) of a plain tools/call.
 */

const TOOLSET = "test_tasks";

/** Takes `ms` to answer (stopped by a cancel like any tool: the runtime aborts it). */
const slow = defineTool({
  spec: {
    id: "test_slow_task",
    toolset: TOOLSET,
    title: "Slow",
    description: "Answers after a while.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({ label: z.string(), ms: z.number().int().min(0).max(30_000) }),
  output: z.object({ label: z.string() }),
  async execute(input, context) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, input.ms);
      context.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return { output: `done ${input.label}`, data: { label: input.label } };
  },
});

const syncOnly = defineTool({
  spec: {
    id: "test_sync_only",
    toolset: TOOLSET,
    title: "Sync only",
    description: "Never a task.",
    category: "utility",
    usageHint: "tests",
    taskSupport: "forbidden",
  },
  input: z.object({}),
  output: z.object({}),
  async execute() {
    return { output: "sync", data: {} };
  },
});

const taskOnly = defineTool({
  spec: {
    id: "test_task_only",
    toolset: TOOLSET,
    title: "Task only",
    description: "Always a task.",
    category: "utility",
    usageHint: "tests",
    taskSupport: "required",
  },
  input: z.object({}),
  output: z.object({}),
  async execute() {
    return { output: "tasked", data: {} };
  },
});

/** Waits for a person when a member calls it (the stage's approval rule). */
const approved = defineTool({
  spec: {
    id: "test_approved_task",
    toolset: TOOLSET,
    title: "Approved",
    description: "Runs once a person approves.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({}),
  output: z.object({}),
  async execute() {
    return { output: "approved", data: {} };
  },
});

let system: TestToolbus;
let api: ApiServer;
/** Three callers: tasks are each one's own. */
const keys: Record<"alice" | "bob" | "carol", string> = { alice: "", bob: "", carol: "" };

beforeAll(async () => {
  system = await startTestToolbus({
    config: { approvals: { rules: [{ tools: ["test_approved_task"], roles: ["member"] }] } },
    tools: [...builtinTools, slow, syncOnly, taskOnly, approved],
    toolsets: [
      ...builtinToolsets,
      { name: TOOLSET, description: "Task tests", owner: "tests", kind: "builtin" as const },
    ],
  });
  api = await serveApi(system.app, { port: 0 });
  for (const name of Object.keys(keys) as (keyof typeof keys)[]) {
    const response = await system.request("/v1/keys", {
      method: "POST",
      json: { name: `tasks-${name}`, role: "member" },
    });
    keys[name] = ((await response.json()) as { key: string }).key;
  }
}, 60_000);

afterAll(async () => {
  await api?.close();
  await system?.stop();
});

/** A v1 client on /mcp (2025-11-25) with `key`, its calls in `runId` when given. */
async function connect(key: string, runId?: string): Promise<Client> {
  const client = new Client({ name: "tasks-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${api.url}/mcp`), {
      requestInit: {
        headers: {
          Authorization: `Bearer ${key}`,
          ...(runId ? { "X-Toolbus-Run-Id": runId } : {}),
        },
      },
    }),
  );
  return client;
}

interface CallView {
  status: string;
  requestedBy?: { id: string };
  result?: { output: string; failure?: { kind: string } };
}

async function callView(
  runId: string,
  callId: string,
): Promise<{ status: number; body: CallView }> {
  const response = await system.request(`/v1/runs/${runId}/calls/${callId}`);
  return { status: response.status, body: (await response.json()) as CallView };
}

/** Reads the call until `done` holds (or fails after `ms`). */
async function until(
  runId: string,
  callId: string,
  done: (call: CallView) => boolean,
  ms = 10_000,
): Promise<CallView> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { body } = await callView(runId, callId);
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`call ${callId}: still ${body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Creates a task without following it: the CreateTaskResult as the client reads it. */
async function createTask(client: Client, args: { label: string; ms: number }, ttl = 60_000) {
  const created = await client.request(
    { method: "tools/call", params: { name: "test_slow_task", arguments: args, task: { ttl } } },
    CreateTaskResultSchema,
  );
  const ids = callOfTaskId(created.task.taskId);
  if (!ids) throw new Error(`not a Toolbus task id: ${created.task.taskId}`);
  return { task: created.task, ...ids };
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe("tasks on 2025-11-25", () => {
  it("declares tasks, and says of each tool whether it may, must or may not run as one", async () => {
    const client = await connect(keys.alice);
    try {
      expect(client.getServerCapabilities()?.tasks).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const { tools } = await client.listTools();
      const support = (name: string) => tools.find((tool) => tool.name === name)?.execution;
      expect(support("test_slow_task")).toEqual({ taskSupport: "optional" });
      expect(support("test_sync_only")).toEqual({ taskSupport: "forbidden" });
      expect(support("test_task_only")).toEqual({ taskSupport: "required" });
    } finally {
      await client.close();
    }
  });

  it("records the task before it answers, follows it to completion, and returns the sync path's result", async () => {
    const client = await connect(keys.alice);
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: "test_slow_task", arguments: { label: "streamed", ms: 600 } },
        CallToolResultSchema,
        { task: { ttl: 120_000 } },
      );
      const messages: { type: string }[] = [];
      let taskId = "";
      for await (const message of stream) {
        messages.push(message);
        if (message.type === "taskCreated") {
          taskId = message.task.taskId;
          expect(message.task).toMatchObject({ status: "working", ttl: 120_000 });
          expect(message.task.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
          // The durable task exists as the answer arrives: its call is on record.
          const ids = callOfTaskId(taskId);
          expect(ids).toBeDefined();
          const { status } = await callView(ids?.runId ?? "", ids?.callId ?? "");
          expect(status).toBe(200);
        }
        if (message.type === "result") {
          expect(message.result.isError).toBe(false);
          expect(message.result.content).toEqual([{ type: "text", text: "done streamed" }]);
          expect(message.result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId });
        }
        if (message.type === "error") throw message.error;
      }
      expect(messages.map((message) => message.type)).toContain("result");
      expect(messages[0]?.type).toBe("taskCreated");
      const task = await client.experimental.tasks.getTask(taskId);
      expect(task).toMatchObject({ taskId, status: "completed", ttl: 120_000 });
      // tasks/result again: the same result, as often as asked.
      const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(again.structuredContent).toEqual({ label: "streamed" });
      expect(again._meta).toMatchObject({ [RELATED_TASK_META_KEY]: { taskId } });
    } finally {
      await client.close();
    }
  });

  it("holds tasks/result until the task ends, telling the task's status before its result", async () => {
    const client = await connect(keys.alice);
    const told: { taskId: string; status: string }[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      told.push(notification.params);
    });
    try {
      const { task } = await createTask(client, { label: "held", ms: 400 });
      const result = await client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: "text", text: "done held" }]);
      expect(told).toEqual([expect.objectContaining({ taskId: task.taskId, status: "completed" })]);
      expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe("completed");
    } finally {
      await client.close();
    }
  });

  it("answers another key's task, and one that never was, as unknown (-32602)", async () => {
    const alice = await connect(keys.alice);
    const bob = await connect(keys.bob);
    try {
      const { task } = await createTask(alice, { label: "private", ms: 0 });
      for (const attempt of [
        () => bob.experimental.tasks.getTask(task.taskId),
        () => bob.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
        () => bob.experimental.tasks.cancelTask(task.taskId),
        () => alice.experimental.tasks.getTask("toolbus.task.bm9uZQ"),
        () => alice.experimental.tasks.getTask("not-a-task"),
      ]) {
        expect((await rpcError(attempt())).code).toBe(-32602);
      }
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it("lists the caller's own tasks, newest first, a page at a time", async () => {
    const carol = await connect(keys.carol);
    const bob = await connect(keys.bob);
    try {
      const made: string[] = [];
      // One more than a page.
      for (let i = 0; i < 21; i++) {
        made.push((await createTask(carol, { label: `listed-${i}`, ms: 0 })).task.taskId);
      }
      const first = await carol.experimental.tasks.listTasks();
      expect(first.tasks).toHaveLength(20);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await carol.experimental.tasks.listTasks(first.nextCursor);
      expect(second.nextCursor).toBeUndefined();
      const listed = [...first.tasks, ...second.tasks].map((task) => task.taskId);
      expect(listed).toEqual([...made].reverse());
      expect(first.tasks[0]).toMatchObject({ ttl: 60_000, pollInterval: expect.any(Number) });
      // Another key sees none of them.
      const others = await bob.experimental.tasks.listTasks();
      expect(others.tasks.map((task) => task.taskId)).not.toContain(made[0]);
      expect(others.tasks.every((task) => !made.includes(task.taskId))).toBe(true);
      // A cursor this server did not hand out is refused.
      for (const cursor of [
        "%%%",
        "eHl6",
        "a".repeat(600),
        Buffer.from("TASKS#x").toString("base64url"),
      ]) {
        expect((await rpcError(carol.experimental.tasks.listTasks(cursor))).code).toBe(-32602);
      }
    } finally {
      await carol.close();
      await bob.close();
    }
  });

  it("cancels a running task: it ends cancelled, with its result event in the run's log", async () => {
    const client = await connect(keys.alice);
    try {
      const { task, runId, callId } = await createTask(client, { label: "stopped", ms: 20_000 });
      await until(runId, callId, (call) => call.status === "running");
      const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
      expect(cancelled).toMatchObject({ taskId: task.taskId, status: "cancelled" });
      const call = await until(runId, callId, (view) => view.status === "failed");
      expect(call.result?.failure?.kind).toBe("cancelled");
      const events = await system.events(runId);
      expect(
        events.filter((e) => e.detailType === "ToolResultReceived" && e.detail.callId === callId),
      ).toHaveLength(1);
      // Cancelled is terminal: a second cancel is refused, and the result says it was cancelled.
      const again = await rpcError(client.experimental.tasks.cancelTask(task.taskId));
      expect(again.code).toBe(-32602);
      expect(again.message).toContain("terminal");
      const result = await client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result.isError).toBe(true);
      expect(result._meta).toMatchObject({ "toolbus/failure": { kind: "cancelled" } });
    } finally {
      await client.close();
    }
  });

  it("keeps a task listed for its ttl: the index item expires with it", async () => {
    const client = await connect(keys.alice);
    const documents = createDocumentClient(testDynamoDbClient());
    try {
      const { task, runId, callId } = await createTask(client, { label: "kept", ms: 0 }, 90_000);
      const { body } = await callView(runId, callId);
      const { Item } = await documents.send(
        new GetCommand({
          TableName: system.tableName,
          Key: {
            pk: taskPartition(body.requestedBy?.id ?? ""),
            sk: taskSortKey({ createdAt: task.createdAt, runId, callId }),
          },
        }),
      );
      expect(Item).toMatchObject({
        runId,
        callId,
        ttlMs: 90_000,
        expiresAt: Math.ceil((Date.parse(task.createdAt) + 90_000) / 1000),
      });
      // A ttl out of bounds is granted within them (and said so).
      const long = await createTask(client, { label: "long", ms: 0 }, 10 ** 12);
      expect(long.task.ttl).toBe(7 * 24 * 3_600_000);
    } finally {
      documents.destroy();
      await client.close();
    }
  });

  it("says a task waits for a person's approval, and where it is decided", async () => {
    const client = await connect(keys.alice);
    try {
      const created = await client.request(
        { method: "tools/call", params: { name: "test_approved_task", arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      expect(created.task.status).toBe("working");
      const ids = callOfTaskId(created.task.taskId);
      const task = await client.experimental.tasks.getTask(created.task.taskId);
      expect(task.status).toBe("working");
      expect(task.statusMessage).toContain("approval");
      expect(task.statusMessage).toContain(`/v1/runs/${ids?.runId}/calls/${ids?.callId}/approve`);
      // Approved, it runs, and the task completes.
      const decided = await system.request(`/v1/runs/${ids?.runId}/calls/${ids?.callId}/approve`, {
        method: "POST",
      });
      expect(decided.status).toBe(200);
      const result = await client.experimental.tasks.getTaskResult(
        created.task.taskId,
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: "text", text: "approved" }]);
    } finally {
      await client.close();
    }
  });

  it("refuses to cancel a finished task (-32602, already terminal)", async () => {
    const client = await connect(keys.alice);
    try {
      const { task, runId, callId } = await createTask(client, { label: "finished", ms: 0 });
      await until(runId, callId, (call) => call.status === "succeeded");
      const error = await rpcError(client.experimental.tasks.cancelTask(task.taskId));
      expect(error.code).toBe(-32602);
      expect(error.message).toContain("already in terminal status completed");
      expect((await callView(runId, callId)).body.status).toBe("succeeded");
    } finally {
      await client.close();
    }
  });

  it("refuses a task where the tool forbids one, and a plain call where it requires one (-32601)", async () => {
    const client = await connect(keys.alice);
    try {
      const forbidden = await rpcError(
        client.request(
          { method: "tools/call", params: { name: "test_sync_only", arguments: {}, task: {} } },
          CreateTaskResultSchema,
        ),
      );
      expect(forbidden.code).toBe(-32601);
      // No tools/list on this client: it would refuse the plain call itself.
      const required = await rpcError(client.callTool({ name: "test_task_only", arguments: {} }));
      expect(required.code).toBe(-32601);
      // The same tools as tasks or plain calls, as they allow.
      expect((await client.callTool({ name: "test_sync_only", arguments: {} })).isError).toBe(
        false,
      );
      const created = await client.request(
        { method: "tools/call", params: { name: "test_task_only", arguments: {}, task: {} } },
        CreateTaskResultSchema,
      );
      expect(created.task.status).toMatch(/working|completed/);
      // Input that does not match cannot be a task: -32602, naming the path.
      const invalid = await rpcError(
        client.request(
          {
            method: "tools/call",
            params: { name: "test_slow_task", arguments: { label: 1, ms: 0 }, task: {} },
          },
          CreateTaskResultSchema,
        ),
      );
      expect(invalid.code).toBe(-32602);
      expect(JSON.stringify(invalid.data)).toContain("label");
    } finally {
      await client.close();
    }
  });
});

describe("cancellation of a plain tools/call on 2025-11-25", () => {
  it("stops the call when the client aborts its request (notifications/cancelled)", async () => {
    const runId = system.runId();
    const client = await connect(keys.alice, runId);
    try {
      const aborted = new AbortController();
      const calling = client
        .callTool(
          { name: "test_slow_task", arguments: { label: "aborted", ms: 20_000 } },
          undefined,
          { signal: aborted.signal },
        )
        .catch((error: unknown) => error);
      // The call is recorded, and runs, before the client gives up on it.
      let callId: string | undefined;
      const deadline = Date.now() + 10_000;
      while (!callId && Date.now() < deadline) {
        // Read as it is: waiting for the system to settle would wait for the call to end.
        const response = await system.request(`/v1/runs/${runId}/events`);
        const { events } = (await response.json()) as {
          events: { detailType: string; detail: { callId: string } }[];
        };
        callId = events.find((e) => e.detailType === "ToolCallScheduled")?.detail.callId;
        if (!callId) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (!callId) throw new Error("the call was never scheduled");
      await until(runId, callId, (call) => call.status === "running");
      aborted.abort("the user pressed stop");
      await calling;
      const call = await until(runId, callId, (view) => view.status === "failed");
      expect(call.result?.failure?.kind).toBe("cancelled");
    } finally {
      await client.close();
    }
  });

  it("stops a call the client named from a notification naming it, whatever request it answers", async () => {
    const runId = system.runId();
    const client = await connect(keys.alice, runId);
    try {
      const calling = client
        .callTool({
          name: "test_slow_task",
          arguments: { label: "named", ms: 20_000 },
          _meta: { "toolbus/callId": "named-call" },
        })
        .catch((error: unknown) => error);
      await until(runId, "named-call", (call) => call.status === "running");
      // As another instance would get it: no request of its own in flight here matches.
      const response = await fetch(`${api.url}/mcp`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${keys.alice}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
          "X-Toolbus-Run-Id": runId,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "elsewhere-1", _meta: { "toolbus/callId": "named-call" } },
        }),
      });
      expect(response.status).toBe(202);
      const call = await until(runId, "named-call", (view) => view.status === "failed");
      expect(call.result?.failure?.kind).toBe("cancelled");
      const answered = await calling;
      expect(answered).toMatchObject({ isError: true });
    } finally {
      await client.close();
    }
  });

  it("leaves another key's call alone", async () => {
    const runId = system.runId();
    const alice = await connect(keys.alice, runId);
    try {
      const calling = alice
        .callTool({
          name: "test_slow_task",
          arguments: { label: "kept", ms: 1_000 },
          _meta: { "toolbus/callId": "kept-call" },
        })
        .catch((error: unknown) => error);
      await until(runId, "kept-call", (call) => call.status === "running");
      const response = await fetch(`${api.url}/mcp`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${keys.bob}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
          "X-Toolbus-Run-Id": runId,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: 1, _meta: { "toolbus/callId": "kept-call" } },
        }),
      });
      expect(response.status).toBe(202);
      expect(await calling).toMatchObject({ isError: false });
      expect((await callView(runId, "kept-call")).body.status).toBe("succeeded");
    } finally {
      await alice.close();
    }
  });
});

describe("the task index", () => {
  it("lists a caller's live tasks newest first, skips expired ones, and refuses a forged position", async () => {
    const documents = createDocumentClient(testDynamoDbClient());
    let now = Date.parse("2026-11-27T10:00:00.000Z");
    const index = new DynamoTaskIndex(
      { client: documents, tableName: system.tableName },
      { now: () => now },
    );
    const principal = `index-${system.runId()}`;
    try {
      const at = (minute: number) => `2026-11-27T09:${String(minute).padStart(2, "0")}:00.000Z`;
      await index.add(principal, { runId: "r1", callId: "a", createdAt: at(1), ttlMs: 3_600_000 });
      await index.add(principal, { runId: "r1", callId: "b", createdAt: at(2), ttlMs: 60_000 });
      await index.add(principal, { runId: "r2", callId: "c", createdAt: at(3), ttlMs: 3_600_000 });
      // b was kept a minute from 09:02: gone at 10:00.
      const first = await index.list(principal, { limit: 1 });
      expect(first.tasks.map((task) => task.callId)).toEqual(["c"]);
      const second = await index.list(principal, {
        limit: 1,
        ...(first.next ? { after: first.next } : {}),
      });
      expect(second).toEqual({
        tasks: [{ runId: "r1", callId: "a", createdAt: at(1), ttlMs: 3_600_000 }],
      });
      expect(
        await index.get(principal, { runId: "r1", callId: "b", createdAt: at(2) }),
      ).toBeUndefined();
      expect(await index.list(`${principal}-other`, { limit: 5 })).toEqual({ tasks: [] });
      for (const after of ["", "TASKS#someone", `${at(3)}#r2`, `${at(3)}#r#2#c`]) {
        await expect(index.list(principal, { limit: 5, after })).rejects.toThrow(/cursor/);
      }
      now += 3_600_000;
      expect((await index.list(principal, { limit: 5 })).tasks).toEqual([]);
    } finally {
      documents.destroy();
    }
  });
});
