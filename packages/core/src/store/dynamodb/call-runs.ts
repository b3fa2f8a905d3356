import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type CallRecord, type CallResult, callRecord, callResult } from "@toolbus/wire/model/call";
import { ToolbusError } from "../../errors";
import type { CallStore } from "../../ports";
import { compactCallItem, expandCallItem } from "./call-item-form";
import {
  type DynamoStoreOptions,
  guard,
  isConditionFailure,
  isValidationException,
  parseInput,
  parseStored,
} from "./client";
import { callKey, RUNNING_PARTITION, traceIndexKey } from "./items";
import { decodeJsonFields, encodeJsonField, encodeJsonFields } from "./json-text";
import { type RecentCalls, recentCalls } from "./recent-calls";
import { fitResult } from "./result-size";

/**
 * When the whole item is still refused (a large input next to the result, or `data` nested
 * deeper than DynamoDB's 32 levels), `complete` retries once with a result this small.
 */
const FALLBACK_RESULT_BYTES = 16_384;

/**
 * What callers and tools choose, kept as JSON text, or deflated where that is smaller (see
 * json-text.ts): the input and result are most of a call item, and every write of the item
 * (create, complete, the recorder's marks in its transaction) is billed per started KB of it.
 * Each is written once: the input when the call is created, the result when it finishes.
 * Readers take either form; which one is written is STORED_FORM's choice.
 */
export const JSON_FIELDS = ["input", "result"];

/**
 * How a call's input and result are written: deflated where that is smaller. The release
 * before the one that turned this on already read both forms, so a function still on it during
 * a deploy (or after a rollback to it) reads what this one writes; items written as text by
 * earlier releases are still read as they are.
 */
const STORED_FORM = { compress: true } as const;

export const storedCall = (item: Record<string, unknown>): CallRecord =>
  parseStored(callRecord, expandCallItem(decodeJsonFields(item, JSON_FIELDS)), "call");

/**
 * A call record as its item, without the index keys (gsi2pk/gsi2sk): put whole, it leaves the
 * sweeper's index (gsi4). Compact: without the fields its keys and input repeat
 * (call-item-form.ts).
 */
export const callItem = (call: CallRecord): Record<string, unknown> => {
  const item = {
    ...callKey(call.parentRunId, call.callId),
    ...call,
    ...traceIndexKey(call),
  };
  return encodeJsonFields(compactCallItem(item), JSON_FIELDS, STORED_FORM);
};

/**
 * A call's result for an update that finishes the call (`SET #result = :result`): its name and
 * value in the form callItem stores it. Only a call without a result is finished, so the
 * result never has an earlier value in the other form.
 */
export function resultUpdate(result: CallResult) {
  const { attribute, value } = encodeJsonField("result", result, STORED_FORM);
  return { names: { "#result": attribute }, values: { ":result": value } };
}

/**
 * What running a call needs of its record: read it, claim it, complete it. A tool's function
 * carries only this; the full store (./calls) adds what the API and the sweeper do.
 * Call records: RUN#<runId> / CALL#<callId>, the record's fields as top-level attributes
 * (input and result as JSON text, deflated where smaller). While a call waits it carries gsi2pk PENDING / gsi2sk
 * <since>, while it runs RUNNING / <deadlineAt>, and it keeps that once it has finished until
 * its result is logged; a call finished without running (refused, decided, cancelled while
 * waiting) carries UNANNOUNCED / <completedAt> until then. Calls a crash left behind are found
 * through a small sparse index.
 */
export class DynamoCallRuns
  implements Pick<CallStore, "get" | "claim" | "complete" | "cancelRequested">
{
  protected readonly options: DynamoStoreOptions;
  protected readonly recentCalls: RecentCalls;

  constructor(options: DynamoStoreOptions) {
    this.options = options;
    this.recentCalls = recentCalls(options);
  }

  /** The call as this process last wrote it, if it did lately (see RecentCalls); no read. */
  recent(parentRunId: string, callId: string): CallRecord | undefined {
    return this.recentCalls.get(parentRunId, callId);
  }

  async get(parentRunId: string, callId: string): Promise<CallRecord | undefined> {
    const { client, tableName } = this.options;
    const { Item } = await guard("calls.get", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: callKey(parentRunId, callId),
          // Callers poll for completion right after a write elsewhere.
          ConsistentRead: true,
        }),
      ),
    );
    return Item && storedCall(Item);
  }

  async cancelRequested(parentRunId: string, callId: string): Promise<boolean> {
    const { client, tableName } = this.options;
    const { Item } = await guard("calls.cancelRequested", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: callKey(parentRunId, callId),
          // A handler asks this every second or so while it runs: the cheapest read will do
          // (a cancel written just now is seen on a later ask).
          ProjectionExpression: "cancelRequestedAt",
        }),
      ),
    );
    return typeof Item?.cancelRequestedAt === "string";
  }

  async claim(
    parentRunId: string,
    callId: string,
    deadlineAt: string,
  ): Promise<CallRecord | undefined> {
    return this.transition("calls.claim", {
      Key: callKey(parentRunId, callId),
      UpdateExpression:
        "SET #status = :running, startedAt = :now, deadlineAt = :deadline, gsi2pk = :index, gsi2sk = :deadline",
      ConditionExpression: "#status = :pending",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":running": "running",
        ":pending": "pending",
        ":now": this.now(),
        ":deadline": deadlineAt,
        ":index": RUNNING_PARTITION,
      },
    });
  }

  async complete(
    parentRunId: string,
    callId: string,
    result: CallResult,
    expected?: { deadlineAt: string },
  ): Promise<CallRecord | undefined> {
    const parsed = parseInput(callResult, result, "call result");
    const update = (stored: CallResult) => {
      const encoded = resultUpdate(stored);
      return this.transition("calls.complete", {
        Key: callKey(parentRunId, callId),
        // Finished but not yet in its run's log: it stays on the index where it ran (RUNNING /
        // its deadline) until the append that logs it takes it off, a moment later. Moving it
        // would write its index entry twice (a delete and a put) for nothing; one whose append
        // never comes is found past its deadline, with its result, and announced again.
        UpdateExpression: "SET #status = :status, #result = :result",
        ConditionExpression: expected
          ? "#status = :running AND deadlineAt = :deadline"
          : "#status = :running",
        ExpressionAttributeNames: { "#status": "status", ...encoded.names },
        ExpressionAttributeValues: {
          ":status": stored.status,
          ...encoded.values,
          ":running": "running",
          ...(expected ? { ":deadline": expected.deadlineAt } : {}),
        },
      });
    };
    try {
      return await update(fitResult(parsed));
    } catch (error) {
      if (!isValidationException(error)) throw error;
      return update(fitResult({ ...parsed, data: null, truncated: true }, FALLBACK_RESULT_BYTES));
    }
  }

  /** A conditional status change; undefined when the call was not in the expected state. */
  protected async transition(
    operation: string,
    input: Omit<ConstructorParameters<typeof UpdateCommand>[0], "TableName">,
  ): Promise<CallRecord | undefined> {
    const { client, tableName } = this.options;
    return guard(operation, tableName, async () => {
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({ ...input, TableName: tableName, ReturnValues: "ALL_NEW" }),
        );
        if (Attributes === undefined) {
          throw new ToolbusError("DynamoDB returned no attributes for ALL_NEW.", {
            context: { operation },
          });
        }
        const call = storedCall(Attributes);
        this.recentCalls.remember(call);
        return call;
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    });
  }

  protected now(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }
}
