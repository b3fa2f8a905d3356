import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type RunPolicy, runPolicy } from "@toolbus/wire/model/run";
import type { RunCount, RunStore, RunUsage } from "../../ports";
import { type DynamoStoreOptions, guard, isConditionFailure, parseStored } from "./client";
import { runPartition } from "./items";

const USAGE_SORT_KEY = "USAGE";
const usageKey = (runId: string) => ({ pk: runPartition(runId), sk: USAGE_SORT_KEY });
/** A run's count of one tool with one input: the loop breaker's. */
const repeatKey = (runId: string, toolId: string, inputHash: string) => ({
  pk: runPartition(runId),
  sk: `REPEAT#${toolId}#${inputHash}`,
});
const TOOL_PREFIX = "tool_";

/**
 * What a run has used, in its own partition: RUN#<runId> / USAGE holds the run's policy (set
 * once), its calls, cost, first call's time and calls per tool (`tool_<id>`); RUN#<runId> /
 * REPEAT#<tool>#<input hash> counts one tool with one input. Counting is one ADD that returns
 * the new totals: each caller gets its own number, so concurrent calls against a limit of n
 * are exactly n under it, whatever the concurrency.
 */
export class DynamoRunStore implements RunStore {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async setPolicy(runId: string, policy: RunPolicy): Promise<{ set: boolean; policy: RunPolicy }> {
    const { client, tableName } = this.#options;
    return guard("runs.setPolicy", tableName, async () => {
      try {
        await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: usageKey(runId),
            UpdateExpression: "SET policyJson = :policy",
            ConditionExpression: "attribute_not_exists(policyJson)",
            ExpressionAttributeValues: { ":policy": JSON.stringify(policy) },
          }),
        );
        return { set: true, policy };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        return { set: false, policy: (await this.usage(runId))?.policy ?? {} };
      }
    });
  }

  async count(
    runId: string,
    call: { toolId: string; cost: number; at: string },
    sign: 1 | -1 = 1,
  ): Promise<RunCount> {
    const { client, tableName } = this.#options;
    const { Attributes } = await guard("runs.count", tableName, () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: usageKey(runId),
          UpdateExpression:
            "ADD calls :one, #tool :one, cost :cost SET firstCallAt = if_not_exists(firstCallAt, :at)",
          ExpressionAttributeNames: { "#tool": `${TOOL_PREFIX}${call.toolId}` },
          ExpressionAttributeValues: { ":one": sign, ":cost": sign * call.cost, ":at": call.at },
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    const item = Attributes ?? {};
    return {
      calls: Number(item.calls ?? 0),
      toolCalls: Number(item[`${TOOL_PREFIX}${call.toolId}`] ?? 0),
      cost: Number(item.cost ?? 0),
      firstCallAt: String(item.firstCallAt ?? call.at),
      ...(typeof item.policyJson === "string" ? { policy: policyOf(item.policyJson) } : {}),
    };
  }

  async countRepeat(
    runId: string,
    toolId: string,
    inputHash: string,
    sign: 1 | -1 = 1,
  ): Promise<number> {
    const { client, tableName } = this.#options;
    const { Attributes } = await guard("runs.countRepeat", tableName, () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: repeatKey(runId, toolId, inputHash),
          UpdateExpression: "ADD repeats :one",
          ExpressionAttributeValues: { ":one": sign },
          ReturnValues: "UPDATED_NEW",
        }),
      ),
    );
    return Number(Attributes?.repeats ?? 0);
  }

  async usage(runId: string): Promise<RunUsage | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("runs.usage", tableName, () =>
      client.send(
        new GetCommand({ TableName: tableName, Key: usageKey(runId), ConsistentRead: true }),
      ),
    );
    if (!Item) return undefined;
    const perTool: Record<string, number> = {};
    for (const [name, value] of Object.entries(Item)) {
      if (name.startsWith(TOOL_PREFIX) && Number(value) > 0) {
        perTool[name.slice(TOOL_PREFIX.length)] = Number(value);
      }
    }
    return {
      calls: Number(Item.calls ?? 0),
      cost: Number(Item.cost ?? 0),
      ...(Item.firstCallAt ? { firstCallAt: String(Item.firstCallAt) } : {}),
      perTool,
      ...(typeof Item.policyJson === "string" ? { policy: policyOf(Item.policyJson) } : {}),
    };
  }
}

function policyOf(text: string): RunPolicy {
  return parseStored(runPolicy, JSON.parse(text), "run policy");
}
