import type { ScenarioCounts } from "./harness";
import type { FunctionCounts } from "./instances";
import { PRICES } from "./prices";

/** One billed resource, per call and per million calls. */
export interface ResourceCost {
  resource: string;
  perCall: number;
  unit: string;
  usdPerMillion: number;
}

/** One function's share, per call. */
export interface FunctionCost {
  handler: string;
  memoryMB: number;
  invocations: number;
  billedMs: number;
  gbSeconds: number;
  writeUnits: number;
  readUnits: number;
  /** Units of refused requests, estimated (DynamoDB reports none for them). */
  estimatedWriteUnits: number;
  estimatedReadUnits: number;
  events: number;
  logBytes: number;
  usdPerMillion: number;
}

export interface OperationCost {
  handler: string;
  operation: string;
  requests: number;
  items: number;
  readUnits: number;
  writeUnits: number;
  failed: number;
  estimatedUnits: number;
}

export interface ScenarioCost {
  resources: ResourceCost[];
  functions: FunctionCost[];
  operations: OperationCost[];
  totalPerMillion: number;
}

const WRITES = /^(PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems)/;
const GB = 1024 ** 3;

function units(f: FunctionCounts) {
  let read = 0;
  let write = 0;
  let estimatedRead = 0;
  let estimatedWrite = 0;
  for (const [operation, row] of Object.entries(f.sdk.dynamodb)) {
    read += row.readUnits;
    write += row.writeUnits;
    if (WRITES.test(operation)) estimatedWrite += row.estimatedUnits;
    else estimatedRead += row.estimatedUnits;
  }
  return { read, write, estimatedRead, estimatedWrite };
}

/** Prices one scenario's counts with PRICES: every figure per call, and dollars per million. */
export function priceScenario(s: ScenarioCounts): ScenarioCost {
  const per = (value: number) => value / s.calls;
  const p = PRICES;
  const functions: FunctionCost[] = Object.entries(s.functions).map(([handler, f]) => {
    const u = units(f);
    const gbSeconds = per((f.billedMs / 1000) * (f.memoryMB / 1024));
    const invocations = per(f.invocations);
    const writeUnits = per(u.write);
    const readUnits = per(u.read);
    const estimatedWriteUnits = per(u.estimatedWrite);
    const estimatedReadUnits = per(u.estimatedRead);
    const events = per(f.sdk.eventbridge.billedEvents);
    const logBytes = per(f.logBytes + f.platformLogBytes);
    const usdPerMillion =
      invocations * p.lambda.perMillionRequests +
      gbSeconds * p.lambda.perGbSecond * 1e6 +
      (writeUnits + estimatedWriteUnits) * p.dynamodb.perMillionWriteUnits +
      (readUnits + estimatedReadUnits) * p.dynamodb.perMillionReadUnits +
      events * p.eventbridge.perMillionEvents +
      (logBytes / GB) * p.cloudwatchLogs.perGbIngested * 1e6;
    return {
      handler,
      memoryMB: f.memoryMB,
      invocations,
      billedMs: per(f.billedMs),
      gbSeconds,
      writeUnits,
      readUnits,
      estimatedWriteUnits,
      estimatedReadUnits,
      events,
      logBytes,
      usdPerMillion,
    };
  });
  const sum = (pick: (f: FunctionCost) => number) => functions.reduce((t, f) => t + pick(f), 0);
  const logBytes = sum((f) => f.logBytes);
  const resources: ResourceCost[] = [
    {
      resource: "API Gateway HTTP API requests",
      perCall: per(s.apiRequests),
      unit: "requests",
      usdPerMillion: per(s.apiRequests) * p.apiGateway.perMillionHttpRequests,
    },
    {
      resource: "Lambda invocations",
      perCall: sum((f) => f.invocations),
      unit: "requests",
      usdPerMillion: sum((f) => f.invocations) * p.lambda.perMillionRequests,
    },
    {
      resource: `Lambda duration (${p.lambda.architecture})`,
      perCall: sum((f) => f.gbSeconds),
      unit: "GB-s",
      usdPerMillion: sum((f) => f.gbSeconds) * p.lambda.perGbSecond * 1e6,
    },
    {
      resource: "DynamoDB write units",
      perCall: sum((f) => f.writeUnits + f.estimatedWriteUnits),
      unit: "WRU",
      usdPerMillion:
        sum((f) => f.writeUnits + f.estimatedWriteUnits) * p.dynamodb.perMillionWriteUnits,
    },
    {
      resource: "DynamoDB read units",
      perCall: sum((f) => f.readUnits + f.estimatedReadUnits),
      unit: "RRU",
      usdPerMillion:
        sum((f) => f.readUnits + f.estimatedReadUnits) * p.dynamodb.perMillionReadUnits,
    },
    {
      resource: "EventBridge events (64 KB chunks)",
      perCall: sum((f) => f.events),
      unit: "events",
      usdPerMillion: sum((f) => f.events) * p.eventbridge.perMillionEvents,
    },
    {
      resource: "CloudWatch Logs ingested",
      perCall: logBytes,
      unit: "bytes",
      usdPerMillion: (logBytes / GB) * p.cloudwatchLogs.perGbIngested * 1e6,
    },
  ];
  const operations: OperationCost[] = Object.entries(s.functions).flatMap(([handler, f]) =>
    Object.entries(f.sdk.dynamodb).map(([operation, row]) => ({
      handler,
      operation,
      requests: per(row.requests),
      items: per(row.items),
      readUnits: per(row.readUnits),
      writeUnits: per(row.writeUnits),
      failed: per(row.failed),
      estimatedUnits: per(row.estimatedUnits),
    })),
  );
  return {
    resources,
    functions,
    operations,
    totalPerMillion: resources.reduce((t, r) => t + r.usdPerMillion, 0),
  };
}
