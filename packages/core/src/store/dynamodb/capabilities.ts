import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { type CapabilityStatus, capabilityStatus } from "@toolbus/wire/model/capability";
import type { CapabilityStore } from "../../ports";
import { type DynamoStoreOptions, guard, parseInput, parseStored, queryAll } from "./client";
import { CAPABILITIES_PARTITION, capabilityKey } from "./items";

/**
 * CAPABILITY#<name> / STATUS, one item per capability, replaced on every check. The items
 * also sit on gsi1 under CAPABILITIES / <name> (an addition to table.ts's list): listing is
 * then one Query by name instead of a Scan over every call, event and key in the table.
 */
export class DynamoCapabilityStore implements CapabilityStore {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async put(status: CapabilityStatus): Promise<CapabilityStatus> {
    const { client, tableName } = this.#options;
    const parsed = parseInput(capabilityStatus, status, "capability status");
    await guard("capabilities.put", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...capabilityKey(parsed.name),
            gsi1pk: CAPABILITIES_PARTITION,
            gsi1sk: parsed.name,
            ...parsed,
          },
        }),
      ),
    );
    return parsed;
  }

  async get(name: string): Promise<CapabilityStatus | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("capabilities.get", tableName, () =>
      client.send(
        new GetCommand({ TableName: tableName, Key: capabilityKey(name), ConsistentRead: true }),
      ),
    );
    return Item && parseStored(capabilityStatus, Item, "capability status");
  }

  async list(): Promise<CapabilityStatus[]> {
    const { client, tableName } = this.#options;
    const items = await guard("capabilities.list", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :capabilities",
        ExpressionAttributeValues: { ":capabilities": CAPABILITIES_PARTITION },
      }),
    );
    return items.map((item) => parseStored(capabilityStatus, item, "capability status"));
  }
}
