import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/**
 * What one function instance asked of AWS, counted by SDK middleware inside that instance:
 * every DynamoDB request with the capacity DynamoDB says it consumed, every PutEvents entry.
 */
export interface SdkCounts {
  /** By operation, `PutItem` or `Query gsi4`: requests and the units the answers reported. */
  dynamodb: Record<string, DynamoOperationCount>;
  eventbridge: { putEventsRequests: number; entries: number; billedEvents: number; bytes: number };
  lambdaInvokes: number;
}

export interface DynamoOperationCount {
  requests: number;
  readUnits: number;
  writeUnits: number;
  /** Refused requests (a failed condition, a cancelled transaction): billed, but unreported. */
  failed: number;
  /** Units for the failed ones, estimated from the request (see estimateFailedUnits). */
  estimatedUnits: number;
  /** Items a transaction or batch wrote or read. */
  items: number;
}

/** The row of `key`, added empty on first use. */
export function operationRow(
  rows: Record<string, DynamoOperationCount>,
  key: string,
): DynamoOperationCount {
  const existing = rows[key];
  if (existing) return existing;
  const row = { requests: 0, readUnits: 0, writeUnits: 0, failed: 0, estimatedUnits: 0, items: 0 };
  rows[key] = row;
  return row;
}

export const emptySdkCounts = (): SdkCounts => ({
  dynamodb: {},
  eventbridge: { putEventsRequests: 0, entries: 0, billedEvents: 0, bytes: 0 },
  lambdaInvokes: 0,
});

const READS = new Set(["GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"]);
const WRITES = new Set([
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "BatchWriteItem",
  "TransactWriteItems",
]);

/** EventBridge bills a PutEvents entry per started 64 KB. */
const EVENT_CHUNK_BYTES = 64 * 1024;

interface PutEventsEntry {
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Resources?: string[];
  Time?: unknown;
}

/** An entry's size as EventBridge computes it for billing and for its 256 KB limit. */
export function eventEntryBytes(entry: PutEventsEntry): number {
  const bytes = (text: string | undefined) => (text ? Buffer.byteLength(text) : 0);
  return (
    (entry.Time ? 14 : 0) +
    bytes(entry.Source) +
    bytes(entry.DetailType) +
    bytes(entry.Detail) +
    (entry.Resources ?? []).reduce((sum, resource) => sum + bytes(resource), 0)
  );
}

type Capacity = {
  TableName?: string;
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
};

function itemsOf(operation: string, input: Record<string, unknown>): number {
  if (operation.startsWith("Transact")) return (input.TransactItems as unknown[]).length;
  if (operation === "BatchWriteItem" || operation === "BatchGetItem") {
    const requests = (input.RequestItems ?? {}) as Record<string, unknown>;
    return Object.values(requests).reduce<number>((sum, value) => {
      const keys = (value as { Keys?: unknown[] }).Keys;
      return sum + (Array.isArray(value) ? value.length : (keys?.length ?? 0));
    }, 0);
  }
  return 1;
}

/**
 * DynamoDB bills a refused write too but reports no capacity for it. Estimated as the
 * smallest charge: one unit per item written, doubled in a transaction (a cancelled
 * transaction is billed as attempted); a refused read, half a unit. Marked as estimated.
 */
function estimateFailedUnits(operation: string, items: number): number {
  if (operation === "TransactWriteItems") return 2 * items;
  if (WRITES.has(operation)) return items;
  return 0.5 * items;
}

/**
 * Adds the counting middleware to every AWS SDK client this instance builds, before its first
 * request: DynamoDB requests carry `ReturnConsumedCapacity: "INDEXES"` and their answers'
 * capacity is added up; EventBridge's PutEvents entries and Lambda Invokes are counted. The
 * clients are the entry point's own, built by core from the environment: patched through the
 * base classes' `send`, since the document client shares its DynamoDB client's stack.
 */
export function installSdkMeter(counts: () => SdkCounts): void {
  const metered = new WeakSet<object>();
  const bases = new Set(
    [DynamoDBClient, DynamoDBDocumentClient, EventBridgeClient, LambdaClient].map(
      (client) =>
        Object.getPrototypeOf(client.prototype) as { send: (...args: unknown[]) => unknown },
    ),
  );
  for (const base of bases) {
    const send = base.send;
    base.send = function meteredSend(this: MeteredClient, ...args: unknown[]) {
      if (!metered.has(this.middlewareStack)) {
        metered.add(this.middlewareStack);
        addMeter(this, counts);
      }
      return send.apply(this, args);
    };
  }
}

interface MeteredClient {
  config: { serviceId?: string };
  middlewareStack: {
    add(
      middleware: (
        next: (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>,
        context: { commandName?: string },
      ) => (args: { input: Record<string, unknown> }) => Promise<{ output: unknown }>,
      options: { step: "initialize"; name: string; priority: "high" },
    ): void;
  };
}

function addMeter(client: MeteredClient, counts: () => SdkCounts): void {
  const service = client.config.serviceId;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = (context.commandName ?? "").replace(/Command$/, "");
      const input = args.input;
      if (service === "EventBridge" && operation === "PutEvents") {
        const entries = (input.Entries ?? []) as PutEventsEntry[];
        const c = counts().eventbridge;
        c.putEventsRequests += 1;
        for (const entry of entries) {
          const size = eventEntryBytes(entry);
          c.entries += 1;
          c.bytes += size;
          c.billedEvents += Math.max(1, Math.ceil(size / EVENT_CHUNK_BYTES));
        }
      }
      if (service === "Lambda" && operation === "Invoke") counts().lambdaInvokes += 1;
      if (service !== "DynamoDB" || !(READS.has(operation) || WRITES.has(operation))) {
        return next(args);
      }
      input.ReturnConsumedCapacity = "INDEXES";
      const index = typeof input.IndexName === "string" ? ` ${input.IndexName}` : "";
      const key = `${operation}${index}`;
      const row = operationRow(counts().dynamodb, key);
      const items = itemsOf(operation, input);
      row.requests += 1;
      row.items += items;
      try {
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: Capacity | Capacity[] })
          .ConsumedCapacity;
        const units = [consumed ?? []]
          .flat()
          .reduce((sum, capacity) => sum + (capacity.CapacityUnits ?? 0), 0);
        if (READS.has(operation)) row.readUnits += units;
        else row.writeUnits += units;
        return result;
      } catch (error) {
        row.failed += 1;
        row.estimatedUnits += estimateFailedUnits(operation, items);
        throw error;
      }
    },
    { step: "initialize", name: "costMeter", priority: "high" },
  );
}
