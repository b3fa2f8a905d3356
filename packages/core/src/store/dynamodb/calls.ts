import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { ToolbusError, ValidationError } from "../../errors";
import {
  type Approval,
  type CallRecord,
  type CallResult,
  callRecord,
  callResult,
} from "../../model/call";
import type { CallStore, CreateCallOutcome } from "../../ports";
import {
  type DynamoStoreOptions,
  guard,
  isConditionFailure,
  isValidationException,
  parseInput,
  parseStored,
  queryAll,
} from "./client";
import {
  APPROVAL_PARTITION,
  callKey,
  callOfKey,
  PENDING_PARTITION,
  RUNNING_PARTITION,
  runPartition,
  traceIndexKey,
  UNANNOUNCED_PARTITION,
} from "./items";
import { decodeJsonFields, encodeJsonFields, jsonAttribute } from "./json-text";
import { type RecentCalls, recentCalls } from "./recent-calls";
import { fitResult } from "./result-size";

/**
 * When the whole item is still refused (a large input next to the result, or `data` nested
 * deeper than DynamoDB's 32 levels), `complete` retries once with a result this small.
 */
const FALLBACK_RESULT_BYTES = 16_384;

/** The most calls GET /v1/runs/{runId} counts by status (a read of about 1 MB per 10,000). */
const MAX_COUNTED_CALLS = 10_000;

/** What callers and tools choose, kept as JSON text (see json-text.ts). */
const JSON_FIELDS = ["input", "result"];

const storedCall = (item: Record<string, unknown>): CallRecord =>
  parseStored(callRecord, decodeJsonFields(item, JSON_FIELDS), "call");

/** A call record as its item, without gsi2's keys: put whole, it leaves the sweeper's index. */
export const callItem = (call: CallRecord): Record<string, unknown> => ({
  ...callKey(call.parentRunId, call.callId),
  ...encodeJsonFields(call, JSON_FIELDS),
  ...traceIndexKey(call),
});

/**
 * Call records: RUN#<runId> / CALL#<callId>, the record's fields as top-level attributes
 * (input and result as JSON text).
 * While a call waits it carries gsi2pk PENDING / gsi2sk <since>, while it runs RUNNING /
 * <deadlineAt>, once finished and until announced UNANNOUNCED / <completedAt>: calls a crash
 * left behind are found through a small sparse index.
 */
export class DynamoCallStore implements CallStore {
  readonly #options: DynamoStoreOptions;
  readonly #recent: RecentCalls;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
    this.#recent = recentCalls(options);
  }

  /** The call as this process last wrote it, if it did lately (see RecentCalls); no read. */
  recent(parentRunId: string, callId: string): CallRecord | undefined {
    return this.#recent.get(parentRunId, callId);
  }

  async create(call: CallRecord): Promise<CreateCallOutcome> {
    const { client, tableName } = this.#options;
    const record = parseInput(callRecord, call, "call record");
    const index =
      record.status === "running" && record.deadlineAt !== undefined
        ? { gsi2pk: RUNNING_PARTITION, gsi2sk: record.deadlineAt }
        : record.status === "pending"
          ? { gsi2pk: PENDING_PARTITION, gsi2sk: record.scheduledAt }
          : record.status === "awaiting_approval" && record.approval
            ? { gsi2pk: APPROVAL_PARTITION, gsi2sk: record.approval.expiresAt }
            : record.result
              ? // Finished as it was made (a call its run's policy refused): announced by the
                // caller, and by the sweeper if that announcement is lost.
                { gsi2pk: UNANNOUNCED_PARTITION, gsi2sk: record.result.completedAt }
              : {};
    return guard("calls.create", tableName, async () => {
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...callKey(record.parentRunId, record.callId),
              ...encodeJsonFields(record, JSON_FIELDS),
              ...index,
              ...traceIndexKey(record),
            },
            ConditionExpression: "attribute_not_exists(pk)",
            // The existing call comes back with the failure: no second read, no race window.
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        this.#recent.remember(record);
        return { created: true, call: record };
      } catch (error) {
        if (!isConditionFailure(error) || error.Item === undefined) throw error;
        // lib-dynamodb unmarshalls outputs only, not the item attached to an error.
        const existing = unmarshall(error.Item as Parameters<typeof unmarshall>[0]);
        return { created: false, call: storedCall(existing) };
      }
    });
  }

  async get(parentRunId: string, callId: string): Promise<CallRecord | undefined> {
    const { client, tableName } = this.#options;
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

  async claim(
    parentRunId: string,
    callId: string,
    deadlineAt: string,
  ): Promise<CallRecord | undefined> {
    return this.#transition("calls.claim", {
      Key: callKey(parentRunId, callId),
      UpdateExpression:
        "SET #status = :running, startedAt = :now, deadlineAt = :deadline, gsi2pk = :index, gsi2sk = :deadline",
      ConditionExpression: "#status = :pending",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: {
        ":running": "running",
        ":pending": "pending",
        ":now": this.#now(),
        ":deadline": deadlineAt,
        ":index": RUNNING_PARTITION,
      },
    });
  }

  async release(parentRunId: string, callId: string): Promise<boolean> {
    const released = await this.#transition("calls.release", {
      Key: callKey(parentRunId, callId),
      UpdateExpression:
        "SET #status = :pending, gsi2pk = :index, gsi2sk = :now REMOVE #dispatch, startedAt, deadlineAt",
      ConditionExpression: "#status = :running AND #dispatch = :direct",
      ExpressionAttributeNames: { "#status": "status", "#dispatch": "dispatch" },
      ExpressionAttributeValues: {
        ":pending": "pending",
        ":running": "running",
        ":direct": "direct",
        ":index": PENDING_PARTITION,
        ":now": this.#now(),
      },
    });
    return released !== undefined;
  }

  async complete(
    parentRunId: string,
    callId: string,
    result: CallResult,
  ): Promise<CallRecord | undefined> {
    const parsed = parseInput(callResult, result, "call result");
    const update = (stored: CallResult) =>
      this.#transition("calls.complete", {
        Key: callKey(parentRunId, callId),
        // Finished but not yet announced: on the index until the publication mark.
        UpdateExpression:
          "SET #status = :status, #result = :result, gsi2pk = :index, gsi2sk = :completedAt",
        ConditionExpression: "#status = :running",
        ExpressionAttributeNames: { "#status": "status", "#result": jsonAttribute("result") },
        ExpressionAttributeValues: {
          ":status": stored.status,
          ":result": JSON.stringify(stored),
          ":running": "running",
          ":index": UNANNOUNCED_PARTITION,
          ":completedAt": stored.completedAt,
        },
      });
    try {
      return await update(fitResult(parsed));
    } catch (error) {
      if (!isValidationException(error)) throw error;
      return update(fitResult({ ...parsed, data: null, truncated: true }, FALLBACK_RESULT_BYTES));
    }
  }

  async countByStatus(parentRunId: string): Promise<Record<string, number>> {
    const { client, tableName } = this.#options;
    const items = await guard("calls.countByStatus", tableName, () =>
      queryAll(
        client,
        {
          TableName: tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :calls)",
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: { ":pk": runPartition(parentRunId), ":calls": "CALL#" },
          ProjectionExpression: "#status",
        },
        MAX_COUNTED_CALLS,
      ),
    );
    const counts: Record<string, number> = {};
    for (const item of items) {
      const status = String(item.status);
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }

  async decide(
    parentRunId: string,
    callId: string,
    decision: NonNullable<Approval["decision"]>,
    refusal?: CallResult,
  ): Promise<CallRecord | undefined> {
    const names = { "#status": "status", "#approval": "approval" };
    const common = {
      Key: callKey(parentRunId, callId),
      ConditionExpression: "#status = :awaiting",
    };
    if (decision.approved) {
      // Approved: a call like any other from here, waiting for its handler.
      return this.#transition("calls.decide", {
        ...common,
        UpdateExpression:
          "SET #status = :pending, #approval.decision = :decision, gsi2pk = :index, gsi2sk = :now",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ":awaiting": "awaiting_approval",
          ":pending": "pending",
          ":decision": decision,
          ":index": PENDING_PARTITION,
          ":now": this.#now(),
        },
      });
    }
    const result = parseInput(callResult, refusal, "call result");
    return this.#transition("calls.decide", {
      ...common,
      UpdateExpression:
        "SET #status = :failed, #approval.decision = :decision, #result = :result, gsi2pk = :index, gsi2sk = :completedAt",
      ExpressionAttributeNames: { ...names, "#result": jsonAttribute("result") },
      ExpressionAttributeValues: {
        ":awaiting": "awaiting_approval",
        ":failed": "failed",
        ":decision": decision,
        ":result": JSON.stringify(result),
        ":index": UNANNOUNCED_PARTITION,
        ":completedAt": result.completedAt,
      },
    });
  }

  listAwaitingApproval(before: string, limit = 100): Promise<CallRecord[]> {
    return this.#listIndexed("calls.listAwaitingApproval", APPROVAL_PARTITION, before, limit);
  }

  listUnannounced(before: string, limit = 100): Promise<CallRecord[]> {
    return this.#listIndexed("calls.listUnannounced", UNANNOUNCED_PARTITION, before, limit);
  }

  listStuck(before: string, limit = 100): Promise<CallRecord[]> {
    return this.#listIndexed("calls.listStuck", RUNNING_PARTITION, before, limit);
  }

  listWaiting(before: string, limit = 100): Promise<CallRecord[]> {
    return this.#listIndexed("calls.listWaiting", PENDING_PARTITION, before, limit);
  }

  /** The calls of one trace, oldest first, at most `limit` (gsi3, then each call's item). */
  async listByTrace(traceId: string, limit = 100): Promise<CallRecord[]> {
    const { client, tableName } = this.#options;
    const keys = await guard("calls.listByTrace", tableName, () =>
      queryAll(
        client,
        {
          TableName: tableName,
          IndexName: "gsi3",
          KeyConditionExpression: "gsi3pk = :trace",
          ExpressionAttributeValues: { ":trace": `TRACE#${traceId}` },
        },
        limit,
      ),
    );
    const calls = await Promise.all(
      keys.map((key) => {
        const { runId, callId } = callOfKey(key);
        return this.get(runId, callId);
      }),
    );
    return calls.filter((call) => call !== undefined);
  }

  /** Calls on one gsi2 partition whose sort key (a time) is before `before`, oldest first. */
  async #listIndexed(
    operation: string,
    partition: string,
    before: string,
    limit: number,
  ): Promise<CallRecord[]> {
    const { client, tableName } = this.#options;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new ValidationError("limit must be a positive integer.", { details: { limit } });
    }
    const items = await guard(operation, tableName, () =>
      queryAll(
        client,
        {
          TableName: tableName,
          IndexName: "gsi2",
          KeyConditionExpression: "gsi2pk = :index AND gsi2sk < :before",
          ExpressionAttributeValues: { ":index": partition, ":before": before },
        },
        limit,
      ),
    );
    return items.map(storedCall);
  }

  /** A conditional status change; undefined when the call was not in the expected state. */
  async #transition(
    operation: string,
    input: Omit<ConstructorParameters<typeof UpdateCommand>[0], "TableName">,
  ): Promise<CallRecord | undefined> {
    const { client, tableName } = this.#options;
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
        this.#recent.remember(call);
        return call;
      } catch (error) {
        if (isConditionFailure(error)) return undefined;
        throw error;
      }
    });
  }

  #now(): string {
    return (this.#options.now?.() ?? new Date()).toISOString();
  }
}
