import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import { DynamoRunStore } from "../packages/core/src/store/dynamodb/runs";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

/**
 * Calls of one run counted at once share one ADD (store/dynamodb/runs.ts): these check on
 * DynamoDB Local that each caller still gets the totals it would have had alone, in order, and
 * that what the run holds afterwards is every call's count.
 */
const client = testDynamoDbClient();
let table: TestTable;
let runs: DynamoRunStore;
/** UpdateItem requests sent since the last reset. */
let updates = 0;

client.middlewareStack.add(
  (next, context) => async (args) => {
    if (context.commandName === "UpdateItemCommand") updates++;
    return next(args);
  },
  { step: "initialize", name: "count-updates" },
);

beforeAll(async () => {
  table = await createToolbusTestTable(client, "run-counts");
  runs = new DynamoRunStore({ client: createDocumentClient(client), tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const at = "2026-11-28T00:00:00.000Z";

describe("counting a run's calls", () => {
  it("counts a lone call with one ADD, as before", async () => {
    updates = 0;
    const count = await runs.count("run-alone", { toolId: "a", cost: 2, at });
    expect(count).toEqual({ calls: 1, toolCalls: 1, cost: 2, firstCallAt: at });
    expect(updates).toBe(1);
  });

  it("gives each of a run's concurrent calls its own totals from fewer ADDs than calls", async () => {
    await runs.count("run-many", { toolId: "a", cost: 0.1, at });
    updates = 0;
    const tools = ["a", "b", "a", "c", "a", "b", "a", "a", "b", "c", "a", "b"];
    const counts = await Promise.all(
      tools.map((toolId, i) =>
        runs.count("run-many", { toolId, cost: i % 2 === 0 ? 0.1 : 0.2, at: `${at}${i}` }),
      ),
    );
    expect(updates).toBeLessThan(tools.length);
    // Every caller has its own number, 2..13, each once.
    expect(counts.map((count) => count.calls).sort((a, b) => a - b)).toEqual(
      tools.map((_, i) => i + 2),
    );
    // Per tool too: the calls of each tool are numbered 1..n among that tool's (one "a" before).
    for (const tool of ["a", "b", "c"]) {
      const numbers = counts
        .filter((_, i) => tools[i] === tool)
        .map((count) => count.toolCalls)
        .sort((a, b) => a - b);
      const before = tool === "a" ? 1 : 0;
      expect(numbers).toEqual(numbers.map((_, i) => before + i + 1));
    }
    // The call numbered n saw the run's cost after n calls, in decimal as DynamoDB adds it.
    const byNumber = [...counts].sort((a, b) => a.calls - b.calls);
    let cost = 0.1;
    for (const count of byNumber) {
      const i = counts.indexOf(count);
      cost = Number((cost + (i % 2 === 0 ? 0.1 : 0.2)).toPrecision(15));
      expect(count.cost).toBe(cost);
      expect(count.firstCallAt).toBe(at);
    }
    const usage = await runs.usage("run-many");
    expect(usage).toMatchObject({ calls: 13, cost: 1.9, perTool: { a: 7, b: 4, c: 2 } });
  });

  it("hands every caller of a batch the run's policy", async () => {
    await runs.setPolicy("run-policy", { maxCalls: 3 });
    const counts = await Promise.all(
      [1, 2, 3, 4].map(() => runs.count("run-policy", { toolId: "a", cost: 0, at })),
    );
    expect(counts.map((count) => count.policy)).toEqual(Array(4).fill({ maxCalls: 3 }));
    expect(counts.map((count) => count.calls).sort()).toEqual([1, 2, 3, 4]);
  });

  it("keeps runs apart: calls of different runs never share an ADD", async () => {
    updates = 0;
    const counts = await Promise.all(
      ["run-x", "run-y", "run-z"].map((runId) => runs.count(runId, { toolId: "a", cost: 1, at })),
    );
    expect(counts.map((count) => count.calls)).toEqual([1, 1, 1]);
    expect(updates).toBe(3);
  });

  it("takes a count back alone", async () => {
    await runs.count("run-back", { toolId: "a", cost: 5, at });
    const back = await runs.count("run-back", { toolId: "a", cost: 5, at }, -1);
    expect(back).toMatchObject({ calls: 0, toolCalls: 0, cost: 0 });
  });
});
