import { gunzipSync, gzipSync } from "node:zlib";
import {
  GetCommand,
  type NativeAttributeValue,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { type HeldReview, heldReview } from "@toolbus/wire/model/registered";
import { type ToolSpec, type ToolsetSpec, toolSpec, toolsetSpec } from "@toolbus/wire/model/tool";
import type { z } from "zod";
import { ConflictError, NotFoundError, ValidationError } from "../../errors";
import type { CatalogList, CatalogStore, Versioned } from "../../ports";
import { catalogVersion } from "../../util/catalog-version";
import {
  type DynamoStoreOptions,
  guard,
  isConditionFailure,
  parseInput,
  parseStored,
  queryAll,
} from "./client";
import {
  CATALOG_PARTITION,
  toolIndexSortKey,
  toolKey,
  toolsetIndexSortKey,
  toolsetKey,
  toolsetReviewKey,
} from "./items";
import { decodeJsonFields, encodeJsonFields, jsonAttribute } from "./json-text";

type Item = Record<string, NativeAttributeValue>;

/**
 * A held review is kept gzipped in one item: it holds whole JSON Schemas, which compress well,
 * and an item holds at most 400 KB. Beyond this the refresh is refused with what to do.
 */
const MAX_REVIEW_BYTES = 350 * 1024;

/** DynamoDB's limit on the items of one TransactWriteItems call. */
const MAX_TRANSACTION_ITEMS = 100;

/**
 * What an administrator or a remote server writes freely (JSON Schemas, examples, an MCP
 * registration's defaults) is kept as JSON text, so any number JSON allows fits (json-text.ts).
 */
const JSON_FIELDS = ["inputSchema", "outputSchema", "examples", "source"];

/** Every attribute a spec may have stored, so a write removes what the new spec leaves out. */
const storedFields = (shape: object): string[] => [
  ...Object.keys(shape),
  ...JSON_FIELDS.map(jsonAttribute),
];

/**
 * Tool and toolset specs, one item each, with their fields as top-level attributes beside
 * `revision` (starts at 1, +1 per write) and `updatedAt`. gsi1 (CATALOG / TOOLSET#...) keeps
 * each toolset followed by its tools, so the whole catalog is one Query in toolset order.
 */
export class DynamoCatalogStore implements CatalogStore {
  readonly #options: DynamoStoreOptions;

  constructor(options: DynamoStoreOptions) {
    this.#options = options;
  }

  async putToolset(spec: ToolsetSpec, expectedRevision?: number): Promise<Versioned<ToolsetSpec>> {
    const parsed = parseInput(toolsetSpec, spec, "toolset spec");
    const item = await this.#write({
      what: "toolset",
      id: parsed.name,
      key: toolsetKey(parsed.name),
      fields: storedFields(toolsetSpec.shape),
      values: {
        ...encodeJsonFields(parsed, JSON_FIELDS),
        gsi1pk: CATALOG_PARTITION,
        gsi1sk: toolsetIndexSortKey(parsed.name),
      },
      expectedRevision,
    });
    return versioned(toolsetSpec, item, "toolset");
  }

  async putTool(spec: ToolSpec, expectedRevision?: number): Promise<Versioned<ToolSpec>> {
    const parsed = parseInput(toolSpec, spec, "tool spec");
    const item = await this.#write({
      what: "tool",
      id: parsed.id,
      key: toolKey(parsed.id),
      fields: storedFields(toolSpec.shape),
      values: {
        ...encodeJsonFields(parsed, JSON_FIELDS),
        gsi1pk: CATALOG_PARTITION,
        gsi1sk: toolIndexSortKey(parsed.toolset, parsed.id),
      },
      expectedRevision,
    });
    return storedTool(item);
  }

  async getToolset(name: string): Promise<Versioned<ToolsetSpec> | undefined> {
    const item = await this.#get(toolsetKey(name), "getToolset");
    return item && versioned(toolsetSpec, item, "toolset");
  }

  async getTool(id: string): Promise<Versioned<ToolSpec> | undefined> {
    const item = await this.#get(toolKey(id), "getTool");
    return item && storedTool(item);
  }

  async list(filter: { toolset?: string; category?: string } = {}): Promise<CatalogList> {
    const { client, tableName } = this.#options;
    const byToolset = filter.toolset !== undefined;
    const items = await guard("catalog.list", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        IndexName: "gsi1",
        KeyConditionExpression: byToolset
          ? "gsi1pk = :catalog AND begins_with(gsi1sk, :prefix)"
          : "gsi1pk = :catalog",
        ExpressionAttributeValues: {
          ":catalog": CATALOG_PARTITION,
          ...(byToolset ? { ":prefix": toolsetIndexSortKey(filter.toolset ?? "") } : {}),
        },
      }),
    );

    let toolsets: Versioned<ToolsetSpec>[] = [];
    let tools: Versioned<ToolSpec>[] = [];
    for (const item of items) {
      const pk = String(item.pk);
      if (pk.startsWith("TOOLSET#")) toolsets.push(versioned(toolsetSpec, item, "toolset"));
      else if (pk.startsWith("TOOL#")) tools.push(storedTool(item));
    }
    // begins_with("TOOLSET#web") also matches toolset "web_extra": keep exact matches only.
    if (byToolset) {
      toolsets = toolsets.filter((toolset) => toolset.name === filter.toolset);
      tools = tools.filter((tool) => tool.toolset === filter.toolset);
    }
    // Category is not part of any key; the catalog is small enough to narrow in memory.
    // Toolsets without a tool of that category are dropped too: they offer nothing here.
    if (filter.category !== undefined) {
      tools = tools.filter((tool) => tool.category === filter.category);
      const offering = new Set(tools.map((tool) => tool.toolset));
      toolsets = toolsets.filter((toolset) => offering.has(toolset.name));
    }
    return { toolsets, tools, version: catalogVersion(toolsets, tools) };
  }

  async setEnabled(
    id: string,
    enabled: boolean,
    expectedRevision?: number,
  ): Promise<Versioned<ToolSpec>> {
    return this.#setAvailabilityFields(
      "catalog.setEnabled",
      id,
      "#availability.#enabled = :value",
      { "#enabled": "enabled" },
      enabled,
      expectedRevision,
    );
  }

  async setAvailability(
    id: string,
    availability: ToolSpec["availability"],
    expectedRevision?: number,
  ): Promise<Versioned<ToolSpec>> {
    // Parsed: only known fields, and an absent one (every mode, every role) stays absent.
    const value = parseInput(toolSpec.shape.availability, availability, "availability");
    return this.#setAvailabilityFields(
      "catalog.setAvailability",
      id,
      "#availability = :value",
      {},
      value,
      expectedRevision,
    );
  }

  /** One conditional update of a tool's availability (or a field of it); +1 revision. */
  async #setAvailabilityFields(
    operation: string,
    id: string,
    assignment: string,
    names: Record<string, string>,
    value: NativeAttributeValue,
    expectedRevision: number | undefined,
  ): Promise<Versioned<ToolSpec>> {
    const { client, tableName } = this.#options;
    const checkRevision = expectedRevision !== undefined;
    const item = await guard(operation, tableName, async () => {
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: toolKey(id),
            UpdateExpression: `SET ${assignment}, revision = revision + :one, updatedAt = :now`,
            ConditionExpression: checkRevision
              ? "attribute_exists(pk) AND revision = :expected"
              : "attribute_exists(pk)",
            ExpressionAttributeNames: { "#availability": "availability", ...names },
            ExpressionAttributeValues: {
              ":value": value,
              ":one": 1,
              ":now": this.#now(),
              ...(checkRevision ? { ":expected": expectedRevision } : {}),
            },
            ReturnValues: "ALL_NEW",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return Attributes ?? {};
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const current = currentRevision(error.Item);
        if (current === undefined) {
          throw new NotFoundError(`No tool ${id}.`, { context: { toolId: id } });
        }
        throw conflict("tool", id, current, expectedRevision);
      }
    });
    return storedTool(item);
  }

  /**
   * Writes a toolset and exactly these tools in one transaction: tools of the toolset that are
   * not listed are deleted. Every item is conditioned on what was read (the toolset's revision,
   * each tool's revision and toolset, new ids not existing), so a concurrent change or an id
   * taken meanwhile by another toolset cancels the whole write: never half a toolset.
   */
  async replaceToolset(
    spec: ToolsetSpec,
    tools: readonly ToolSpec[],
    { review, expectedRevision }: { review?: HeldReview | null; expectedRevision?: number } = {},
  ): Promise<{ toolset: Versioned<ToolsetSpec>; tools: Versioned<ToolSpec>[] }> {
    const toolset = parseInput(toolsetSpec, spec, "toolset spec");
    const parsed = tools.map((tool) => parseInput(toolSpec, tool, "tool spec"));
    const [current, { tools: currentTools }] = await Promise.all([
      this.getToolset(toolset.name),
      this.list({ toolset: toolset.name }),
    ]);
    if (expectedRevision !== undefined && current?.revision !== expectedRevision) {
      throw conflict("toolset", toolset.name, current?.revision, expectedRevision);
    }
    const now = this.#now();
    const revisions = new Map(currentTools.map((tool) => [tool.id, tool.revision]));
    const wanted = new Set(parsed.map((tool) => tool.id));
    const items: NonNullable<TransactWriteCommandInput["TransactItems"]> = [
      this.#putItem(
        {
          ...toolsetKey(toolset.name),
          ...encodeJsonFields(toolset, JSON_FIELDS),
          gsi1pk: CATALOG_PARTITION,
          gsi1sk: toolsetIndexSortKey(toolset.name),
        },
        current?.revision,
        now,
      ),
      ...parsed.map((tool) =>
        this.#putItem(
          {
            ...toolKey(tool.id),
            ...encodeJsonFields(tool, JSON_FIELDS),
            gsi1pk: CATALOG_PARTITION,
            gsi1sk: toolIndexSortKey(tool.toolset, tool.id),
          },
          revisions.get(tool.id),
          now,
          tool.toolset,
        ),
      ),
      ...currentTools
        .filter((tool) => !wanted.has(tool.id))
        .map((tool) => this.#deleteItem(toolKey(tool.id), toolset.name)),
      ...(review === undefined ? [] : [this.#reviewItem(toolset.name, review)]),
    ];
    await this.#transact(items, `toolset ${toolset.name}`);
    const stamp = (revision: number | undefined) => ({
      revision: (revision ?? 0) + 1,
      updatedAt: now,
    });
    return {
      toolset: { ...toolset, ...stamp(current?.revision) },
      tools: parsed.map((tool) => ({ ...tool, ...stamp(revisions.get(tool.id)) })),
    };
  }

  async getReview(name: string): Promise<HeldReview | undefined> {
    const item = await this.#get(toolsetReviewKey(name), "getReview");
    if (!item) return undefined;
    const held = item.held as Uint8Array;
    return parseStored(heldReview, JSON.parse(gunzipSync(held).toString("utf8")), "held review");
  }

  async setReview(name: string, review: HeldReview | null, revision: number): Promise<void> {
    await this.#transact(
      [
        {
          // The review is part of the toolset's state: its revision (the ETag) moves with it.
          Update: {
            TableName: this.#options.tableName,
            Key: toolsetKey(name),
            UpdateExpression: "SET revision = revision + :one, updatedAt = :now",
            ConditionExpression: "revision = :revision",
            ExpressionAttributeValues: { ":revision": revision, ":one": 1, ":now": this.#now() },
          },
        },
        this.#reviewItem(name, review),
      ],
      `the review of toolset ${name}`,
    );
  }

  /** The write of a toolset's held review: a Put of the gzipped JSON, or a Delete for null. */
  #reviewItem(name: string, review: HeldReview | null) {
    const { tableName } = this.#options;
    if (review === null) return { Delete: { TableName: tableName, Key: toolsetReviewKey(name) } };
    const held = gzipSync(JSON.stringify(parseInput(heldReview, review, "held review")));
    if (held.byteLength > MAX_REVIEW_BYTES) {
      throw new ValidationError(
        `The changes the server of toolset ${name} made are too large to hold for review (${held.byteLength} bytes compressed, at most ${MAX_REVIEW_BYTES}). Register the toolset again to pin what the server declares now, or register it with "updates": "follow".`,
      );
    }
    return {
      Put: {
        TableName: tableName,
        Item: { ...toolsetReviewKey(name), held, updatedAt: this.#now() },
      },
    };
  }

  /** Deletes a toolset, its tools and its held review in one transaction; NotFoundError if it is absent. */
  async removeToolset(name: string, expectedRevision?: number): Promise<string[]> {
    const [current, { tools }] = await Promise.all([
      this.getToolset(name),
      this.list({ toolset: name }),
    ]);
    if (!current) throw new NotFoundError(`Toolset ${name} does not exist.`);
    if (expectedRevision !== undefined && current.revision !== expectedRevision) {
      throw conflict("toolset", name, current.revision, expectedRevision);
    }
    await this.#transact(
      [
        {
          Delete: {
            TableName: this.#options.tableName,
            Key: toolsetKey(name),
            ConditionExpression: "revision = :revision",
            ExpressionAttributeValues: { ":revision": current.revision },
          },
        },
        ...tools.map((tool) => this.#deleteItem(toolKey(tool.id), name)),
        this.#reviewItem(name, null),
      ],
      `toolset ${name}`,
    );
    return tools.map((tool) => tool.id);
  }

  #putItem(item: Item, revision: number | undefined, now: string, toolset?: string) {
    const values: Item = { ":revision": revision ?? 0 };
    let condition = "attribute_not_exists(pk)";
    if (revision !== undefined) {
      condition = "revision = :revision";
      if (toolset !== undefined) {
        condition += " AND toolset = :toolset";
        values[":toolset"] = toolset;
      }
    }
    return {
      Put: {
        TableName: this.#options.tableName,
        Item: { ...item, revision: (revision ?? 0) + 1, updatedAt: now },
        ConditionExpression: condition,
        ...(revision === undefined ? {} : { ExpressionAttributeValues: values }),
      },
    };
  }

  #deleteItem(key: { pk: string; sk: string }, toolset: string) {
    return {
      Delete: {
        TableName: this.#options.tableName,
        Key: key,
        ConditionExpression: "toolset = :toolset",
        ExpressionAttributeValues: { ":toolset": toolset },
      },
    };
  }

  async #transact(
    items: NonNullable<TransactWriteCommandInput["TransactItems"]>,
    what: string,
  ): Promise<void> {
    if (items.length > MAX_TRANSACTION_ITEMS) {
      throw new ValidationError(
        `Changing ${what} takes ${items.length} writes; one change may make at most ${MAX_TRANSACTION_ITEMS}. Remove the toolset first, then register it again.`,
      );
    }
    const { client, tableName } = this.#options;
    await guard("catalog.transact", tableName, async () => {
      try {
        await client.send(new TransactWriteCommand({ TransactItems: items }));
      } catch (error) {
        if (error instanceof Error && error.name === "TransactionCanceledException") {
          throw new ConflictError(
            `The catalog changed while ${what} was being written (a tool id was taken or a revision moved on); nothing was written. Read it again and retry.`,
            { cause: error },
          );
        }
        throw error;
      }
    });
  }

  /**
   * Replaces an item in one UpdateItem, so the revision bump is atomic and needs no read:
   * SET every field of the new spec, REMOVE every schema field it leaves out (a cleared
   * optional field must not survive from the previous version).
   * expectedRevision 0 means "must not exist yet"; any other value must match the stored one.
   */
  async #write(input: {
    what: string;
    id: string;
    key: { pk: string; sk: string };
    fields: string[];
    values: Item;
    expectedRevision: number | undefined;
  }): Promise<Item> {
    const { client, tableName } = this.#options;
    const { what, id, key, fields, values, expectedRevision } = input;
    const names: Record<string, string> = {};
    const attributeValues: Item = { ":zero": 0, ":one": 1, ":now": this.#now() };
    const sets = ["revision = if_not_exists(revision, :zero) + :one", "updatedAt = :now"];
    const removes: string[] = [];

    const attributes = [...new Set([...fields, ...Object.keys(values)])];
    attributes.forEach((attribute, index) => {
      names[`#a${index}`] = attribute;
      if (values[attribute] === undefined) {
        removes.push(`#a${index}`);
      } else {
        sets.push(`#a${index} = :a${index}`);
        attributeValues[`:a${index}`] = values[attribute];
      }
    });

    let condition: string | undefined;
    if (expectedRevision === 0) condition = "attribute_not_exists(pk)";
    else if (expectedRevision !== undefined) {
      condition = "revision = :expected";
      attributeValues[":expected"] = expectedRevision;
    }

    return guard(`catalog.put.${what}`, tableName, async () => {
      try {
        const { Attributes } = await client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: `SET ${sets.join(", ")}${removes.length > 0 ? ` REMOVE ${removes.join(", ")}` : ""}`,
            ConditionExpression: condition,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: attributeValues,
            ReturnValues: "ALL_NEW",
            ReturnValuesOnConditionCheckFailure: "ALL_OLD",
          }),
        );
        return Attributes ?? {};
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        throw conflict(what, id, currentRevision(error.Item), expectedRevision);
      }
    });
  }

  async #get(key: { pk: string; sk: string }, operation: string): Promise<Item | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard(`catalog.${operation}`, tableName, () =>
      client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true })),
    );
    return Item;
  }

  #now(): string {
    return (this.#options.now?.() ?? new Date()).toISOString();
  }
}

/**
 * Registration once gave an MCP tool that declared no output schema a made-up one (an object
 * holding `content`). Its answer is now its content blocks, with no schema: a tool stored
 * before reads as the server declared it, so neither its calls nor `tools/list` hold to
 * the made-up schema until the toolset is refreshed.
 */
const FORMER_MCP_OUTPUT = JSON.stringify({
  type: "object",
  properties: { content: { type: "array", items: { type: "object" } } },
  required: ["content"],
});

function storedTool(item: Item): Versioned<ToolSpec> {
  const tool = versioned(toolSpec, item, "tool");
  if (
    tool.implementation.kind !== "mcp" ||
    JSON.stringify(tool.outputSchema) !== FORMER_MCP_OUTPUT
  ) {
    return tool;
  }
  const { outputSchema: _madeUp, ...declared } = tool;
  return declared;
}

function versioned<T>(schema: z.ZodType<T>, item: Item, what: string): Versioned<T> {
  return {
    ...parseStored(schema, decodeJsonFields(item, JSON_FIELDS), what),
    revision: Number(item.revision),
    updatedAt: String(item.updatedAt),
  };
}

/**
 * The revision in a ConditionalCheckFailedException's Item. The SDK returns that item raw
 * (lib-dynamodb does not unmarshall errors), so read the number attribute by hand.
 */
function currentRevision(item: unknown): number | undefined {
  const revision = (item as { revision?: { N?: string } } | undefined)?.revision?.N;
  return revision === undefined ? undefined : Number(revision);
}

function conflict(
  what: string,
  id: string,
  current: number | undefined,
  expected: number | undefined,
): ConflictError {
  const message =
    current === undefined
      ? `The ${what} ${id} does not exist (expected revision ${expected}).`
      : `The ${what} ${id} is at revision ${current}, not ${expected}.`;
  return new ConflictError(message, {
    details: { currentRevision: current ?? null, expectedRevision: expected ?? null },
    context: { [what]: id },
  });
}
