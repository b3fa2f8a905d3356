import { type AttributeValue, DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import { LambdaClient } from "@aws-sdk/client-lambda";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";

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
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
  LocalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
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

/** Milliseconds this instance spent on the cost model's own reads: not the function's time. */
export const meterOverhead = { ms: 0 };

/** An item's size as DynamoDB bills it: each attribute's name and value, in bytes. */
export function itemBytes(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + valueBytes(value),
    0,
  );
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return Buffer.byteLength(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.replace(/[^0-9]/g, "").length / 2) + 1;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  if (value.L) return 3 + value.L.reduce((sum, element) => sum + 1 + valueBytes(element), 0);
  if (value.M) {
    return (
      3 +
      Object.entries(value.M).reduce(
        (sum, [key, element]) => sum + 1 + Buffer.byteLength(key) + valueBytes(element),
        0,
      )
    );
  }
  if (value.SS) return value.SS.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (value.NS) return value.NS.reduce((sum, n) => sum + valueBytes({ N: n }), 0);
  if (value.BS) return value.BS.reduce((sum, bytes) => sum + bytes.byteLength, 0);
  return 0;
}

/** A request's item or key in DynamoDB's form, whichever form the client was given it in. */
function attributeMap(value: Record<string, unknown>): Record<string, AttributeValue> {
  const first = Object.values(value)[0];
  const marshalled =
    typeof first === "object" &&
    first !== null &&
    !(first instanceof Uint8Array) &&
    Object.keys(first).length === 1 &&
    ["S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"].includes(
      Object.keys(first)[0] ?? "",
    );
  return marshalled
    ? (value as Record<string, AttributeValue>)
    : marshall(value, { removeUndefinedValues: true, convertClassInstanceToMap: true });
}

interface TransactAction {
  Put?: { TableName: string; Item: Record<string, unknown> };
  Update?: { TableName: string; Key: Record<string, unknown> };
  Delete?: { TableName: string; Key: Record<string, unknown> };
  ConditionCheck?: { TableName: string; Key: Record<string, unknown> };
}

/**
 * A transaction's write units as AWS bills them: two per started KB of each item, index
 * writes besides. DynamoDB Local reports the table's part on the items' total size instead
 * (a 0.3 KB, a 0.5 KB and a 1.4 KB item: 6 units, where AWS bills 8), so that part is counted
 * here: a put's item from the request, an updated, deleted or checked item read back after the
 * transaction (the larger of before and after is billed; our transactions only add to items).
 */
async function transactionWriteUnits(
  read: (tableName: string, key: Record<string, AttributeValue>) => Promise<number>,
  actions: TransactAction[],
  consumed: Capacity[],
): Promise<number> {
  const indexes = consumed.reduce(
    (sum, capacity) =>
      sum +
      [capacity.GlobalSecondaryIndexes, capacity.LocalSecondaryIndexes]
        .flatMap((byIndex) => Object.values(byIndex ?? {}))
        .reduce((total, index) => total + (index.CapacityUnits ?? 0), 0),
    0,
  );
  let table = 0;
  for (const action of actions) {
    const target = action.Update ?? action.Delete ?? action.ConditionCheck;
    const bytes = action.Put
      ? itemBytes(attributeMap(action.Put.Item))
      : target
        ? await read(target.TableName, attributeMap(target.Key))
        : 0;
    table += 2 * Math.max(1, Math.ceil(bytes / 1024));
  }
  return table + indexes;
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
  // Reads the cost model makes for itself (a transaction's items, to size them): not counted,
  // and their time is taken off the invocation's (meterOverhead).
  let uncounted: DynamoDBClient | undefined;
  const readItemBytes = async (tableName: string, key: Record<string, AttributeValue>) => {
    if (!uncounted) {
      uncounted = new DynamoDBClient({});
      metered.add(uncounted.middlewareStack);
    }
    const started = performance.now();
    try {
      const { Item } = await uncounted.send(
        new GetItemCommand({ TableName: tableName, Key: key, ConsistentRead: true }),
      );
      return Item ? itemBytes(Item) : 0;
    } finally {
      meterOverhead.ms += performance.now() - started;
    }
  };
  for (const base of bases) {
    const send = base.send;
    base.send = function meteredSend(this: MeteredClient, ...args: unknown[]) {
      if (!metered.has(this.middlewareStack)) {
        metered.add(this.middlewareStack);
        addMeter(this, counts, readItemBytes);
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

function addMeter(
  client: MeteredClient,
  counts: () => SdkCounts,
  readItemBytes: (tableName: string, key: Record<string, AttributeValue>) => Promise<number>,
): void {
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
        const capacities = [consumed ?? []].flat();
        const reported = capacities.reduce(
          (sum, capacity) => sum + (capacity.CapacityUnits ?? 0),
          0,
        );
        // The transaction is written: a failed sizing read must not look like its failure.
        const units =
          operation === "TransactWriteItems"
            ? await transactionWriteUnits(
                readItemBytes,
                input.TransactItems as TransactAction[],
                capacities,
              ).catch(() => reported)
            : reported;
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
