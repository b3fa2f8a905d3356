import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type RunPolicy, runPolicy } from "@toolbus/wire/model/run";
import type { RunCount, RunStore, RunUsage } from "../../ports";
import { KeyedGroupCommit } from "../../util/group-commit";
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
/** Most calls of one run one ADD counts: its expression names each of their tools. */
const MAX_COUNTED_AT_ONCE = 25;

type Counted = { toolId: string; cost: number; at: string };

/**
 * A sum of declared costs as DynamoDB's decimal ADD would give it (0.1 + 0.2 is 0.3), so a
 * total handed out of a batched ADD compares with a budget as one added alone would.
 */
function exactSum(a: number, b: number): number {
  return Number((a + b).toPrecision(15));
}

/**
 * What a run has used, in its own partition: RUN#<runId> / USAGE holds the run's policy (set
 * once), its calls, cost, first call's time and calls per tool (`tool_<id>`); RUN#<runId> /
 * REPEAT#<tool>#<input hash> counts one tool with one input. Counting is one ADD that returns
 * the new totals: each caller gets its own number, so concurrent calls against a limit of n
 * are exactly n under it, whatever the concurrency. Calls of one run counted at once in this
 * process share one ADD (a run's parallel tool calls: one write instead of one each).
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

  async count(runId: string, call: Counted, sign: 1 | -1 = 1): Promise<RunCount> {
    // Taking a count back is rare (a refusal, a repeated call id): it goes alone.
    if (sign === -1) return (await this.#add(runId, [call], -1))[0] as RunCount;
    return this.#counts.submit(runId, call);
  }

  /**
   * One ADD for calls of one run counted at once (a run's parallel tool calls): the totals it
   * returns are handed out in submission order, as if each call had been added alone in that
   * order, so each caller still gets its own number and a limit of n still lets exactly n run.
   */
  readonly #counts = new KeyedGroupCommit<Counted, RunCount>(
    async (runId, calls) =>
      (await this.#add(runId, calls, 1)).map((value) => ({ ok: true, value })),
    { maxItems: MAX_COUNTED_AT_ONCE },
  );

  async #add(runId: string, calls: readonly Counted[], sign: 1 | -1): Promise<RunCount[]> {
    const { client, tableName } = this.#options;
    const perTool = new Map<string, number>();
    let cost = 0;
    let first = calls[0]?.at ?? "";
    for (const call of calls) {
      perTool.set(call.toolId, (perTool.get(call.toolId) ?? 0) + 1);
      cost = exactSum(cost, call.cost);
      if (call.at < first) first = call.at;
    }
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {
      ":calls": sign * calls.length,
      ":cost": sign * cost,
      ":at": first,
    };
    const tools = [...perTool].map(([toolId, count], i) => {
      names[`#t${i}`] = `${TOOL_PREFIX}${toolId}`;
      values[`:t${i}`] = sign * count;
      return `, #t${i} :t${i}`;
    });
    const { Attributes } = await guard("runs.count", tableName, () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: usageKey(runId),
          UpdateExpression: `ADD calls :calls, cost :cost${tools.join("")} SET firstCallAt = if_not_exists(firstCallAt, :at)`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    const item = Attributes ?? {};
    const policy = typeof item.policyJson === "string" ? { policy: policyOf(item.policyJson) } : {};
    // What the run held before this ADD, then each call's totals in turn.
    let calledBefore = Number(item.calls ?? 0) - sign * calls.length;
    let costBefore = Number(item.cost ?? 0) - sign * cost;
    const toolBefore = new Map(
      [...perTool].map(([toolId, count]) => [
        toolId,
        Number(item[`${TOOL_PREFIX}${toolId}`] ?? 0) - sign * count,
      ]),
    );
    return calls.map((call) => {
      calledBefore += sign;
      costBefore = exactSum(costBefore, sign * call.cost);
      const toolCalls = (toolBefore.get(call.toolId) ?? 0) + sign;
      toolBefore.set(call.toolId, toolCalls);
      return {
        calls: calledBefore,
        toolCalls,
        cost: costBefore,
        firstCallAt: String(item.firstCallAt ?? call.at),
        ...policy,
      };
    });
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
