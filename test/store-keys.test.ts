import { createHash } from "node:crypto";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, ValidationError } from "../packages/core/src/errors";
import { createDocumentClient, DynamoKeyStore } from "../packages/core/src/store/dynamodb";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let keys: DynamoKeyStore;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-keys");
  keys = new DynamoKeyStore({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

describe("DynamoKeyStore", () => {
  it("issues a tbk_<keyId>_<secret> key that verifies to its record", async () => {
    const { key, record } = await keys.create({ name: "ci", role: "member" });

    expect(key).toMatch(/^tbk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(key.split("_")[1]).toBe(record.keyId);
    expect(record).toEqual({
      keyId: record.keyId,
      name: "ci",
      role: "member",
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
    expect(await keys.verify(key)).toEqual(record);
  });

  it("issues a different key and id every time", async () => {
    const first = await keys.create({ name: "a", role: "viewer" });
    const second = await keys.create({ name: "a", role: "viewer" });
    expect(first.key).not.toBe(second.key);
    expect(first.record.keyId).not.toBe(second.record.keyId);
  });

  it("stores only the key's sha256, never the key itself", async () => {
    const { key, record } = await keys.create({ name: "hashed", role: "member" });
    const { Items = [] } = await documents.send(
      new QueryCommand({
        TableName: table.tableName,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :keys AND gsi1sk = :id",
        ExpressionAttributeValues: { ":keys": "KEYS", ":id": `KEY#${record.keyId}` },
      }),
    );
    expect(Items).toHaveLength(1);
    const stored = JSON.stringify(Items[0]);
    expect(Items[0]?.pk).toBe(`KEY#${sha256(key)}`);
    expect(Items[0]?.pk).not.toContain(key);
    expect(stored).not.toContain(key.split("_").slice(2).join("_"));
  });

  it("does not verify unknown, empty or oversized keys", async () => {
    expect(
      await keys.verify("tbk_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
    ).toBe(undefined);
    expect(await keys.verify("")).toBeUndefined();
    expect(await keys.verify("k".repeat(5_000))).toBeUndefined();
  });

  it("lists records without plaintext keys or hashes", async () => {
    const { key, record } = await keys.create({ name: "listed", role: "admin" });
    const listed = await keys.list();

    expect(listed).toContainEqual(record);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(key);
    expect(text).not.toContain(sha256(key));
    const publicFields = ["keyId", "name", "role", "createdAt", "revokedAt", "lastUsedAt"];
    for (const item of listed) {
      expect(Object.keys(item).every((name) => publicFields.includes(name))).toBe(true);
    }
  });

  it("revokes a key by id: it no longer verifies, and revoking again keeps the first time", async () => {
    let clock = new Date("2026-03-01T00:00:00.000Z");
    const timed = new DynamoKeyStore({
      client: documents,
      tableName: table.tableName,
      now: () => clock,
    });
    const { key, record } = await timed.create({ name: "revoked", role: "member" });

    const revoked = await timed.revoke(record.keyId);
    expect(revoked).toEqual({ ...record, revokedAt: "2026-03-01T00:00:00.000Z" });
    expect(await timed.verify(key)).toBeUndefined();

    clock = new Date("2026-03-02T00:00:00.000Z");
    expect((await timed.revoke(record.keyId)).revokedAt).toBe("2026-03-01T00:00:00.000Z");
    expect((await timed.list()).find((item) => item.keyId === record.keyId)?.revokedAt).toBe(
      "2026-03-01T00:00:00.000Z",
    );
  });

  it("fails with NotFoundError when revoking an unknown id", async () => {
    await expect(keys.revoke("0123456789abcdef")).rejects.toBeInstanceOf(NotFoundError);
  });

  describe("fixed keys (the admin bootstrap key from configuration)", () => {
    it("registers a key of the tbk format under the id it carries", async () => {
      const fixed = `tbk_00112233aabbccdd_${"A".repeat(43)}`;
      const { key, record } = await keys.create({ name: "bootstrap", role: "admin", key: fixed });

      expect(key).toBe(fixed);
      expect(record.keyId).toBe("00112233aabbccdd");
      expect(await keys.verify(fixed)).toEqual(record);
    });

    it("registers any other string under an id that reveals nothing of its hash", async () => {
      const fixed = "configured-admin-secret";
      const { record } = await keys.create({ name: "admin", role: "admin", key: fixed });

      expect(sha256(fixed)).not.toContain(record.keyId);
      expect(await keys.verify(fixed)).toEqual(record);
    });

    it("returns the existing record when the same key is registered again at start-up", async () => {
      const fixed = "restart-registered-key";
      const first = await keys.create({ name: "admin", role: "admin", key: fixed });
      const again = await keys.create({ name: "admin", role: "admin", key: fixed });

      expect(again.record).toEqual(first.record);
      expect(
        (await keys.list()).filter(
          (item) => item.name === "admin" && item.keyId === first.record.keyId,
        ),
      ).toHaveLength(1);
    });

    it("keeps a revoked fixed key revoked when it is registered again", async () => {
      const fixed = "revoked-bootstrap-key";
      const { record } = await keys.create({ name: "admin", role: "admin", key: fixed });
      await keys.revoke(record.keyId);

      await expect(
        keys.create({ name: "admin", role: "admin", key: fixed }),
      ).rejects.toBeInstanceOf(ConflictError);
      expect(await keys.verify(fixed)).toBeUndefined();
    });

    it("uses a given keyId, and refuses one another key already has", async () => {
      const { record } = await keys.create({ name: "named", role: "member", keyId: "deploy-bot" });
      expect(record.keyId).toBe("deploy-bot");
      await expect(
        keys.create({ name: "named", role: "member", keyId: "deploy-bot" }),
      ).rejects.toBeInstanceOf(ConflictError);
      await expect(
        keys.create({ name: "x", role: "member", keyId: "no spaces" }),
      ).rejects.toBeInstanceOf(ValidationError);
    });
  });

  it("never keeps the plaintext in the item, even for a fixed key", async () => {
    const fixed = "plaintext-check-key";
    await keys.create({ name: "plain", role: "member", key: fixed });
    const { Item } = await documents.send(
      new GetCommand({
        TableName: table.tableName,
        Key: { pk: `KEY#${sha256(fixed)}`, sk: "KEY" },
      }),
    );
    expect(Item).toBeDefined();
    expect(JSON.stringify(Item)).not.toContain(fixed);
  });
});
