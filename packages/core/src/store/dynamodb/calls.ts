import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import {
  type Approval,
  type CallRecord,
  type CallResult,
  callRecord,
  callResult,
} from "@toolbus/wire/model/call";
import type { RunBudget } from "@toolbus/wire/model/run";
import { ValidationError } from "../../errors";
import type { CallStore, CreateCallOutcome } from "../../ports";
import { callItem, DynamoCallRuns, resultUpdate, storedCall } from "./call-runs";
import { guard, isConditionFailure, parseInput, queryAll } from "./client";
import { queryIndexed } from "./indexed";
import {
  APPROVAL_PARTITION,
  callKey,
  callOfKey,
  PENDING_PARTITION,
  RUNNING_PARTITION,
  runPartition,
  UNANNOUNCED_PARTITION,
} from "./items";

/** The most calls GET /v1/runs/{runId} counts by status (a read of about 1 MB per 10,000). */
const MAX_COUNTED_CALLS = 10_000;

/**
 * Call records as the API, the sweeper and the recorder use them: creating, releasing,
 * deciding, counting and listing them, beside what running one needs (./call-runs).
 */
export class DynamoCallStore extends DynamoCallRuns implements CallStore {
  async create(call: CallRecord): Promise<CreateCallOutcome> {
    const record = parseInput(callRecord, call, "call record");
    try {
      await this.#putWhole("calls.create", record, {
        ConditionExpression: "attribute_not_exists(pk)",
        // The existing call comes back with the failure: no second read, no race window.
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
      });
      return { created: true, call: record };
    } catch (error) {
      if (!isConditionFailure(error) || error.Item === undefined) throw error;
      // lib-dynamodb unmarshalls outputs only, not the item attached to an error.
      const existing = unmarshall(error.Item as Parameters<typeof unmarshall>[0]);
      return { created: false, call: storedCall(existing) };
    }
  }

  async rewrite(call: CallRecord, made: CallRecord["status"]): Promise<boolean> {
    try {
      await this.#putWhole("calls.rewrite", parseInput(callRecord, call, "call record"), {
        // Still as it was made: nothing ran it (a cancel asked for meanwhile yields).
        ConditionExpression: "#status = :made",
        ExpressionAttributeNames: { "#status": "status" },
        ExpressionAttributeValues: { ":made": made },
      });
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }

  /** Puts the call's whole item on `condition`, and remembers the call once it is stored. */
  async #putWhole(
    operation: string,
    record: CallRecord,
    condition: Omit<ConstructorParameters<typeof PutCommand>[0], "TableName" | "Item">,
  ): Promise<void> {
    const { client, tableName } = this.options;
    await guard(operation, tableName, () =>
      client.send(
        new PutCommand({
          ...condition,
          TableName: tableName,
          Item: storedItem(record),
        }),
      ),
    );
    this.recentCalls.remember(record);
  }

  async keepBudget(call: CallRecord, budget: RunBudget): Promise<boolean> {
    const kept = await this.transition("calls.keepBudget", {
      Key: callKey(call.parentRunId, call.callId),
      UpdateExpression: "SET budget = :budget",
      ConditionExpression: "#status = :made",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":budget": budget, ":made": call.status },
    });
    return kept !== undefined;
  }

  async release(parentRunId: string, callId: string): Promise<boolean> {
    const released = await this.transition("calls.release", {
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
        ":now": this.now(),
      },
    });
    return released !== undefined;
  }

  async countByStatus(parentRunId: string): Promise<Record<string, number>> {
    const { client, tableName } = this.options;
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

  async cancel(
    parentRunId: string,
    callId: string,
    refusal: CallResult,
  ): Promise<{ outcome: "cancelled" | "requested" | "finished"; call: CallRecord } | undefined> {
    const result = parseInput(callResult, refusal, "call result");
    const encoded = resultUpdate(result);
    const key = callKey(parentRunId, callId);
    // Not started: it fails now, off the waiting and approval indexes, onto the outbox.
    const cancelled = await this.transition("calls.cancel", {
      Key: key,
      UpdateExpression:
        "SET #status = :failed, #result = :result, cancelRequestedAt = :at, gsi2pk = :index, gsi2sk = :at",
      ConditionExpression: "#status IN (:pending, :awaiting)",
      ExpressionAttributeNames: { "#status": "status", ...encoded.names },
      ExpressionAttributeValues: {
        ":failed": "failed",
        ...encoded.values,
        ":at": result.completedAt,
        ":index": UNANNOUNCED_PARTITION,
        ":pending": "pending",
        ":awaiting": "awaiting_approval",
      },
    });
    if (cancelled) return { outcome: "cancelled", call: cancelled };
    // Running: its handler sees the mark and stops the tool; the first mark stays.
    const requested = await this.transition("calls.cancel", {
      Key: key,
      UpdateExpression: "SET cancelRequestedAt = if_not_exists(cancelRequestedAt, :at)",
      ConditionExpression: "#status = :running",
      ExpressionAttributeNames: { "#status": "status" },
      ExpressionAttributeValues: { ":at": result.completedAt, ":running": "running" },
    });
    if (requested) return { outcome: "requested", call: requested };
    const call = await this.get(parentRunId, callId);
    return call && { outcome: "finished", call };
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
      return this.transition("calls.decide", {
        ...common,
        UpdateExpression:
          "SET #status = :pending, #approval.decision = :decision, gsi2pk = :index, gsi2sk = :now",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: {
          ":awaiting": "awaiting_approval",
          ":pending": "pending",
          ":decision": decision,
          ":index": PENDING_PARTITION,
          ":now": this.now(),
        },
      });
    }
    const result = parseInput(callResult, refusal, "call result");
    const encoded = resultUpdate(result);
    return this.transition("calls.decide", {
      ...common,
      UpdateExpression:
        "SET #status = :failed, #approval.decision = :decision, #result = :result, gsi2pk = :index, gsi2sk = :completedAt",
      ExpressionAttributeNames: { ...names, ...encoded.names },
      ExpressionAttributeValues: {
        ":awaiting": "awaiting_approval",
        ":failed": "failed",
        ":decision": decision,
        ...encoded.values,
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
    const { client, tableName } = this.options;
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

  /** Calls on one gsi4 partition whose sort key (a time) is before `before`, oldest first. */
  async #listIndexed(
    operation: string,
    partition: string,
    before: string,
    limit: number,
  ): Promise<CallRecord[]> {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new ValidationError("limit must be a positive integer.", { details: { limit } });
    }
    const items = await queryIndexed(this.options, operation, partition, before, limit);
    return items.map(storedCall);
  }
}

/** A call's item with the index entry its status puts it on. */
function storedItem(record: CallRecord): Record<string, unknown> {
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
  return { ...callItem(record), ...index };
}
