import { BatchGetCommand, type DynamoDBDocumentClient, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { UnavailableError } from "../packages/core/src/errors";
import { queryIndexed } from "../packages/core/src/store/dynamodb/indexed";

/**
 * gsi4 holds keys only: its readers query it for keys, then read the items. What the index says
 * and what the item holds may differ (an index lags its table, and items move on between the
 * two reads), and a batch read may leave keys unprocessed. A stub client stands in for
 * DynamoDB, which never shows either on demand.
 */

type Item = Record<string, unknown>;

/** A stub table: the index's entries as the index has them, the items as they are now. */
function stubClient(options: {
  entries: Item[];
  items: Map<string, Item>;
  /** How many keys each BatchGetItem leaves unprocessed on its first attempt. */
  leaveUnprocessed?: (request: number) => number;
}) {
  const batches: number[] = [];
  const queries: Record<string, unknown>[] = [];
  let requests = 0;
  const client = {
    async send(command: unknown) {
      if (command instanceof QueryCommand) {
        queries.push(command.input as Record<string, unknown>);
        const limit = command.input.Limit ?? Number.POSITIVE_INFINITY;
        return { Items: options.entries.slice(0, limit) };
      }
      if (command instanceof BatchGetCommand) {
        const request = command.input.RequestItems?.table;
        expect(request?.ConsistentRead).toBe(true);
        const keys = (request?.Keys ?? []) as Item[];
        batches.push(keys.length);
        const left = Math.min(keys.length, options.leaveUnprocessed?.(requests++) ?? 0);
        const served = keys.slice(0, keys.length - left);
        const found = served.flatMap((key) => {
          const item = options.items.get(`${key.pk}/${key.sk}`);
          return item ? [item] : [];
        });
        return {
          Responses: { table: found },
          ...(left > 0 ? { UnprocessedKeys: { table: { Keys: keys.slice(served.length) } } } : {}),
        };
      }
      throw new Error(`Unexpected command ${String(command)}`);
    },
  };
  return {
    options: { client: client as unknown as DynamoDBDocumentClient, tableName: "table" },
    batches,
    queries,
  };
}

const entry = (n: number, sk: string) => ({
  pk: `RUN#r`,
  sk: `CALL#${n}`,
  gsi2pk: "RUNNING",
  gsi2sk: sk,
});
const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`;

describe("reading gsi4's items", () => {
  it("queries gsi4 and reads each item once, consistently, 100 keys at most a request", async () => {
    const entries = Array.from({ length: 250 }, (_, n) => entry(n, at(n % 60)));
    const items = new Map(entries.map((e) => [`${e.pk}/${e.sk}`, { ...e, status: "running" }]));
    const stub = stubClient({ entries, items });
    const found = await queryIndexed(stub.options, "test", "RUNNING", at(59), 500);
    expect(stub.queries[0]).toMatchObject({
      IndexName: "gsi4",
      KeyConditionExpression: "gsi2pk = :index AND gsi2sk < :before",
      ExpressionAttributeValues: { ":index": "RUNNING", ":before": at(59) },
    });
    expect(stub.batches).toEqual([100, 100, 50]);
    // Those at second 59 are not before `before`; the rest come back oldest first.
    expect(found).toHaveLength(250 - 4);
    const keys = found.map((item) => String(item.gsi2sk));
    expect(keys).toEqual([...keys].sort());
  });

  it("leaves out an item that moved on since the index listed it, and orders by the item's key", async () => {
    const entries = [entry(1, at(1)), entry(2, at(2)), entry(3, at(3)), entry(4, at(4))];
    const items = new Map<string, Item>([
      // Completed meanwhile: on another partition now.
      ["RUN#r/CALL#1", { ...entries[0], gsi2pk: "UNANNOUNCED" }],
      // Claimed again meanwhile: its new deadline is not past.
      ["RUN#r/CALL#2", { ...entries[1], gsi2sk: at(50) }],
      // Moved within the partition, still before: kept, at its place now.
      ["RUN#r/CALL#3", { ...entries[2], gsi2sk: at(5) }],
      ["RUN#r/CALL#4", { ...entries[3] }],
      // CALL#… missing from the items: deleted meanwhile.
    ]);
    const stub = stubClient({ entries: [...entries, entry(5, at(6))], items });
    const found = await queryIndexed(stub.options, "test", "RUNNING", at(10), 100);
    expect(found.map((item) => item.sk)).toEqual(["CALL#4", "CALL#3"]);
  });

  it("asks no more of the index than the limit", async () => {
    const entries = Array.from({ length: 20 }, (_, n) => entry(n, at(n)));
    const items = new Map(entries.map((e) => [`${e.pk}/${e.sk}`, e]));
    const stub = stubClient({ entries, items });
    const found = await queryIndexed(stub.options, "test", "RUNNING", at(59), 5);
    expect(stub.queries[0]?.Limit).toBe(5);
    expect(found.map((item) => item.sk)).toEqual([
      "CALL#0",
      "CALL#1",
      "CALL#2",
      "CALL#3",
      "CALL#4",
    ]);
  });

  it("reads again what a batch left unprocessed", async () => {
    const entries = Array.from({ length: 30 }, (_, n) => entry(n, at(n)));
    const items = new Map(entries.map((e) => [`${e.pk}/${e.sk}`, e]));
    // The first request serves 10 of 30, the second 10 of 20, the third the rest.
    const stub = stubClient({
      entries,
      items,
      leaveUnprocessed: (request) => [20, 10][request] ?? 0,
    });
    const found = await queryIndexed(stub.options, "test", "RUNNING", at(59), 100);
    expect(stub.batches).toEqual([30, 20, 10]);
    expect(found).toHaveLength(30);
  });

  it("gives up as unavailable when DynamoDB keeps leaving keys unprocessed", async () => {
    const entries = [entry(1, at(1))];
    const items = new Map(entries.map((e) => [`${e.pk}/${e.sk}`, e]));
    const stub = stubClient({ entries, items, leaveUnprocessed: () => 1 });
    await expect(queryIndexed(stub.options, "test", "RUNNING", at(59), 100)).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(stub.batches).toEqual([1, 1, 1, 1, 1]);
  });
});
