import { UpdateItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDynamoDbClient } from "./support/dynamodb";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * On a stage whose policy limits nothing, a call is counted against its run while it is
 * stored (both writes at once). The count's answer comes before anything runs, so what it
 * decides for a run with limits of its own is written over the fresh call: its budget, or its
 * refusal. These check each outcome against DynamoDB Local, through the API.
 */
let system: TestToolbus;
const dynamodb = testDynamoDbClient();

beforeAll(async () => {
  system = await startTestToolbus();
}, 60_000);

afterAll(async () => {
  await system?.stop();
  dynamodb.destroy();
});

interface CallView {
  callId: string;
  status: string;
  budget?: { calls?: number };
  result?: {
    output: string;
    durationMs: number;
    failure?: { kind: string; retryable: boolean; message: string };
  };
}

async function call(runId: string, callId: string, text = "Short words here."): Promise<CallView> {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text }, callId, wait: 10 },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

async function stored(runId: string, callId: string): Promise<CallView> {
  const response = await system.request(`/v1/runs/${runId}/calls/${callId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as CallView;
}

async function usage(runId: string): Promise<{ calls: number }> {
  const response = await system.request(`/v1/runs/${runId}`);
  return ((await response.json()) as { usage: { calls: number } }).usage;
}

describe("a call counted while it is stored", () => {
  it("keeps no budget for a run without limits, and counts the call", async () => {
    const runId = system.runId();
    const made = await call(runId, "free");
    expect(made.status).toBe("succeeded");
    expect(made.budget).toBeUndefined();
    expect((await stored(runId, "free")).budget).toBeUndefined();
    expect(await usage(runId)).toMatchObject({ calls: 1 });
  });

  it("stores the budget a run's own limit leaves, and refuses the call past it without running it", async () => {
    const runId = system.runId();
    const policy = await system.request(`/v1/runs/${runId}/policy`, {
      method: "PUT",
      json: { maxCalls: 2 },
    });
    expect(policy.status).toBe(200);
    expect(await call(runId, "one")).toMatchObject({ status: "succeeded", budget: { calls: 1 } });
    expect(await call(runId, "two")).toMatchObject({ status: "succeeded", budget: { calls: 0 } });
    const refused = await call(runId, "three", "One too many.");
    expect(refused).toMatchObject({
      status: "failed",
      result: { durationMs: 0, failure: { kind: "budget_exceeded" } },
    });
    // What a reader finds later is what the caller was told.
    expect(await stored(runId, "two")).toMatchObject({ budget: { calls: 0 } });
    expect(await stored(runId, "three")).toMatchObject({
      status: "failed",
      result: { failure: { kind: "budget_exceeded" } },
    });
    // The refused call was counted back out, and both its events are in the run's log.
    expect(await usage(runId)).toMatchObject({ calls: 2 });
    const events = await system.events<{ detailType: string; detail: { callId: string } }>(runId);
    expect(
      events.filter((event) => event.detail.callId === "three").map((event) => event.detailType),
    ).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });

  it("runs exactly as many of 24 concurrent calls as a run's own limit allows", async () => {
    const runId = system.runId();
    await system.request(`/v1/runs/${runId}/policy`, { method: "PUT", json: { maxCalls: 5 } });
    const calls = await Promise.all(
      Array.from({ length: 24 }, (_, index) => call(runId, `c${index}`, `Text ${index}.`)),
    );
    expect(calls.filter((made) => made.status === "succeeded")).toHaveLength(5);
    expect(calls.filter((made) => made.result?.failure?.kind === "budget_exceeded")).toHaveLength(
      19,
    );
    expect(await usage(runId)).toMatchObject({ calls: 5 });
  });

  it("fails a call whose run could not be counted, unrun, and a retry of its id finds that", async () => {
    const runId = system.runId();
    // A usage item DynamoDB cannot add to: the count is refused by the store itself.
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: system.tableName,
        Key: { pk: { S: `RUN#${runId}` }, sk: { S: "USAGE" } },
        UpdateExpression: "SET calls = :text",
        ExpressionAttributeValues: { ":text": { S: "not a number" } },
      }),
    );
    const failed = await call(runId, "uncounted");
    expect(failed).toMatchObject({
      status: "failed",
      result: { durationMs: 0, failure: { kind: "internal", retryable: true } },
    });
    expect(failed.result?.failure?.message).toContain("could not be counted");
    expect(await call(runId, "uncounted")).toMatchObject({
      status: "failed",
      result: { failure: { kind: "internal" } },
    });
    expect(await stored(runId, "uncounted")).toMatchObject({ status: "failed" });
  });

  it("sends the count and the call's write together, not one after the other", async () => {
    const runId = system.runId();
    const seen = new Map<string, { sentAt: number; doneAt?: number }>();
    system.dynamodb.middlewareStack.add(
      (next) => async (args) => {
        const sk = sortKeyOf(args.input);
        const entry: { sentAt: number; doneAt?: number } = { sentAt: performance.now() };
        // The first of each: the call's write (later, its completion names the same key).
        if ((sk === "USAGE" || sk === "CALL#together") && !seen.has(sk)) seen.set(sk, entry);
        try {
          return await next(args);
        } finally {
          entry.doneAt = performance.now();
        }
      },
      { step: "initialize", name: "watchCountAndCreate" },
    );
    try {
      expect((await call(runId, "together")).status).toBe("succeeded");
    } finally {
      system.dynamodb.middlewareStack.remove("watchCountAndCreate");
    }
    const count = seen.get("USAGE");
    const create = seen.get("CALL#together");
    if (!count?.doneAt || !create?.doneAt) throw new Error(`seen: ${[...seen.keys()]}`);
    // Each was sent before the other's answer came back.
    expect(create.sentAt).toBeLessThan(count.doneAt);
    expect(count.sentAt).toBeLessThan(create.doneAt);
  });

  it("refuses a call its run's count refuses even when a cancel came between its write and the refusal", async () => {
    const runId = system.runId();
    await system.request(`/v1/runs/${runId}/policy`, { method: "PUT", json: { maxCalls: 1 } });
    expect((await call(runId, "first")).status).toBe("succeeded");
    // Right after the second call is stored, and before the refusal is written over it, its
    // caller cancels it.
    let cancelled: number | undefined;
    system.dynamodb.middlewareStack.add(
      (next) => async (args) => {
        const answer = await next(args);
        const { Item } = args.input as { Item?: { status?: unknown } };
        const status = Item?.status;
        const running = status === "running" || (status as { S?: string })?.S === "running";
        if (sortKeyOf(args.input) === "CALL#second" && Item && running && !cancelled) {
          const response = await system.request(`/v1/runs/${runId}/calls/second/cancel`, {
            method: "POST",
          });
          cancelled = response.status;
        }
        return answer;
      },
      { step: "initialize", name: "cancelInBetween" },
    );
    try {
      const refused = await call(runId, "second", "One too many.");
      expect(cancelled).toBe(202);
      expect(refused).toMatchObject({
        status: "failed",
        result: { durationMs: 0, failure: { kind: "budget_exceeded" } },
      });
    } finally {
      system.dynamodb.middlewareStack.remove("cancelInBetween");
    }
    expect(await stored(runId, "second")).toMatchObject({
      status: "failed",
      result: { failure: { kind: "budget_exceeded" } },
    });
    expect(await usage(runId)).toMatchObject({ calls: 1 });
  });
});

/** The sort key a request names, in the document client's form or DynamoDB's. */
function sortKeyOf(input: unknown): string | undefined {
  const { Key, Item } = input as { Key?: { sk?: unknown }; Item?: { sk?: unknown } };
  const sk = Key?.sk ?? Item?.sk;
  return typeof sk === "string" ? sk : (sk as { S?: string } | undefined)?.S;
}
