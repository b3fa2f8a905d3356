import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedCatalog } from "../packages/core/src/app/catalog/seed";
import { ConflictError, NotFoundError } from "../packages/core/src/errors";
import {
  createDocumentClient,
  DynamoCapabilityStore,
  DynamoCatalogStore,
} from "../packages/core/src/store/dynamodb";
import {
  type ToolSpec,
  type ToolSpecInput,
  type ToolsetSpec,
  toolSpec,
} from "../packages/wire/src/model/tool";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;
let catalog: DynamoCatalogStore;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "store-catalog");
  catalog = new DynamoCatalogStore({ client: documents, tableName: table.tableName });
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const toolset = (name: string): ToolsetSpec => ({
  name,
  description: `The ${name} toolset.`,
  owner: "toolbus",
  kind: "builtin",
});

const tool = (overrides: Partial<ToolSpecInput> & { id: string; toolset: string }): ToolSpec =>
  toolSpec.parse({
    title: overrides.id,
    description: `Does ${overrides.id}.`,
    category: "research",
    usageHint: "When you need it.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    ...overrides,
  });

describe("DynamoCatalogStore", () => {
  it("reads an MCP tool stored with the output schema registration used to make up as having none", async () => {
    const madeUp = {
      type: "object",
      properties: { content: { type: "array", items: { type: "object" } } },
      required: ["content"],
    };
    const mcp = { kind: "mcp" as const, url: "https://mcp.example/mcp", remoteName: "t" };
    await catalog.putTool(
      tool({ id: "older_mcp_tool", toolset: "older", implementation: mcp, outputSchema: madeUp }),
    );
    expect(await catalog.getTool("older_mcp_tool")).not.toHaveProperty("outputSchema");
    // The same schema on a tool that is not an MCP server's, or one the server declared
    // itself in another form, is kept.
    await catalog.putTool(tool({ id: "own_schema_tool", toolset: "older", outputSchema: madeUp }));
    expect((await catalog.getTool("own_schema_tool"))?.outputSchema).toEqual(madeUp);
  });

  it("stores a tool and reads it back equal, at revision 1", async () => {
    const spec = tool({
      id: "roundtrip_tool",
      toolset: "roundtrip",
      cache: { ttlSeconds: 60, staleIfErrorSeconds: 0 },
      guidelines: { do: ["cite"], dont: [] },
    });
    const stored = await catalog.putTool(spec);

    expect(stored.revision).toBe(1);
    expect(stored.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const read = await catalog.getTool("roundtrip_tool");
    expect(read).toEqual(stored);
    expect(read).not.toHaveProperty("pk");
    expect(read).not.toHaveProperty("gsi1sk");
    const { revision: _revision, updatedAt: _updatedAt, ...fields } = read ?? stored;
    expect(fields).toEqual(spec);
  });

  it("returns undefined for a tool or toolset that does not exist", async () => {
    expect(await catalog.getTool("no_such_tool")).toBeUndefined();
    expect(await catalog.getToolset("no_such_toolset")).toBeUndefined();
  });

  it("increments the revision on every write and drops optional fields a replacement leaves out", async () => {
    await catalog.putTool(
      tool({
        id: "replaced_tool",
        toolset: "replace",
        cache: { ttlSeconds: 5, staleIfErrorSeconds: 0 },
      }),
    );
    const second = await catalog.putTool(tool({ id: "replaced_tool", toolset: "replace" }));

    expect(second.revision).toBe(2);
    expect(second.cache).toBeUndefined();
    expect((await catalog.getTool("replaced_tool"))?.cache).toBeUndefined();
  });

  it("rejects a write with a stale expected revision and names the current one", async () => {
    const first = await catalog.putToolset(toolset("contested"));
    await catalog.putToolset(
      { ...toolset("contested"), description: "Changed once." },
      first.revision,
    );

    const stale = catalog.putToolset({ ...toolset("contested"), description: "Lost update." }, 1);
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    await expect(stale).rejects.toThrow(/revision 2/);
    expect((await catalog.getToolset("contested"))?.description).toBe("Changed once.");
  });

  it("treats expected revision 0 as create-only", async () => {
    await catalog.putToolset(toolset("created_once"), 0);
    await expect(catalog.putToolset(toolset("created_once"), 0)).rejects.toBeInstanceOf(
      ConflictError,
    );
  });

  it("rejects an expected revision for a spec that does not exist", async () => {
    await expect(catalog.putToolset(toolset("never_written"), 3)).rejects.toBeInstanceOf(
      ConflictError,
    );
    expect(await catalog.getToolset("never_written")).toBeUndefined();
  });

  describe("list", () => {
    beforeAll(async () => {
      // Written out of order, so the order of the listing comes from the index.
      await catalog.putToolset(toolset("web_extra"));
      await catalog.putTool(tool({ id: "zeta_search", toolset: "web", category: "research" }));
      await catalog.putTool(tool({ id: "extra_fetch", toolset: "web_extra", category: "utility" }));
      await catalog.putToolset(toolset("web"));
      await catalog.putTool(tool({ id: "alpha_links", toolset: "web", category: "reference" }));
      await catalog.putToolset(toolset("ancient"));
    });

    it("lists toolsets in name order, each followed by its tools in id order", async () => {
      const { toolsets, tools } = await catalog.list();
      const names = toolsets.map((item) => item.name);
      expect(names.indexOf("ancient")).toBeLessThan(names.indexOf("web"));
      expect(names.indexOf("web")).toBeLessThan(names.indexOf("web_extra"));

      const ids = tools.map((item) => item.id);
      expect(ids.indexOf("alpha_links")).toBeLessThan(ids.indexOf("zeta_search"));
      expect(ids.indexOf("zeta_search")).toBeLessThan(ids.indexOf("extra_fetch"));
      expect(tools.every((item) => item.revision >= 1)).toBe(true);
    });

    it("narrows to one toolset without matching toolsets that share its name as a prefix", async () => {
      const { toolsets, tools } = await catalog.list({ toolset: "web" });
      expect(toolsets.map((item) => item.name)).toEqual(["web"]);
      expect(tools.map((item) => item.id)).toEqual(["alpha_links", "zeta_search"]);
    });

    it("narrows by category, keeping only toolsets that offer a tool of it", async () => {
      const { toolsets, tools } = await catalog.list({ category: "utility" });
      expect(tools.map((item) => item.id)).toEqual(["extra_fetch"]);
      expect(toolsets.map((item) => item.name)).toEqual(["web_extra"]);
    });

    it("combines the toolset and category filters", async () => {
      const { tools } = await catalog.list({ toolset: "web", category: "reference" });
      expect(tools.map((item) => item.id)).toEqual(["alpha_links"]);
    });

    it("reads past DynamoDB's 1 MB page so a large catalog comes back whole", async () => {
      const bulky = "x".repeat(1_900);
      const ids = Array.from(
        { length: 600 },
        (_, index) => `bulk_${String(index).padStart(3, "0")}`,
      );
      for (let start = 0; start < ids.length; start += 50) {
        await Promise.all(
          ids
            .slice(start, start + 50)
            .map((id) =>
              catalog.putTool(
                tool({ id, toolset: "bulk", inputSchema: { type: "object", description: bulky } }),
              ),
            ),
        );
      }
      const { tools } = await catalog.list({ toolset: "bulk" });
      expect(tools.map((item) => item.id)).toEqual(ids);
    });
  });

  describe("setEnabled", () => {
    it("flips availability.enabled, bumps the revision and keeps the other availability settings", async () => {
      const stored = await catalog.putTool(
        tool({
          id: "switchable",
          toolset: "switches",
          availability: { enabled: true, modes: ["plan"] },
        }),
      );
      const disabled = await catalog.setEnabled("switchable", false, stored.revision);

      expect(disabled.availability).toEqual({ enabled: false, modes: ["plan"] });
      expect(disabled.revision).toBe(stored.revision + 1);
      expect((await catalog.getTool("switchable"))?.availability.enabled).toBe(false);
    });

    it("fails with ConflictError on a stale revision", async () => {
      await catalog.putTool(tool({ id: "stale_switch", toolset: "switches" }));
      await catalog.setEnabled("stale_switch", false);
      await expect(catalog.setEnabled("stale_switch", true, 1)).rejects.toBeInstanceOf(
        ConflictError,
      );
      expect((await catalog.getTool("stale_switch"))?.availability.enabled).toBe(false);
    });

    it("fails with NotFoundError for an unknown tool, without creating it", async () => {
      await expect(catalog.setEnabled("ghost_tool", false)).rejects.toBeInstanceOf(NotFoundError);
      await expect(catalog.setEnabled("ghost_tool", false, 1)).rejects.toBeInstanceOf(
        NotFoundError,
      );
      expect(await catalog.getTool("ghost_tool")).toBeUndefined();
    });
  });
});

describe("DynamoCapabilityStore", () => {
  it("stores, replaces and lists capability statuses by name", async () => {
    const capabilities = new DynamoCapabilityStore({
      client: documents,
      tableName: table.tableName,
    });
    await capabilities.put({
      name: "search_api_key",
      available: false,
      reason: "SEARCH_API_KEY is not set",
      source: "env:SEARCH_API_KEY",
      checkedAt: "2026-01-01T00:00:00.000Z",
    });
    await capabilities.put({
      name: "network",
      available: true,
      checkedAt: "2026-01-01T00:00:00.000Z",
    });
    await capabilities.put({
      name: "search_api_key",
      available: true,
      source: "env:SEARCH_API_KEY",
      checkedAt: "2026-01-02T00:00:00.000Z",
    });

    expect(await capabilities.get("search_api_key")).toEqual({
      name: "search_api_key",
      available: true,
      source: "env:SEARCH_API_KEY",
      checkedAt: "2026-01-02T00:00:00.000Z",
    });
    expect(await capabilities.get("github_token")).toBeUndefined();
    expect((await capabilities.list()).map((status) => status.name)).toEqual([
      "network",
      "search_api_key",
    ]);
  });
});

describe("seedCatalog", () => {
  it("updates what the code owns and keeps every availability setting an administrator made", async () => {
    const kit = toolset("seed_kit");
    const shipped = tool({ id: "seed_kit_search", toolset: "seed_kit" });
    expect((await seedCatalog(catalog, [kit], [shipped])).written).toEqual([
      "toolset:seed_kit",
      "tool:seed_kit_search",
    ]);
    const seeded = await catalog.getTool(shipped.id);
    const { revision: _r, updatedAt: _u, ...spec } = seeded as NonNullable<typeof seeded>;
    const administered = { enabled: false, minRole: "admin", modes: ["research"] };
    await catalog.putTool({ ...spec, availability: administered }, seeded?.revision);

    // A restart with unchanged code writes nothing; a new release updates the description only.
    expect((await seedCatalog(catalog, [kit], [shipped])).written).toEqual([]);
    const released = { ...shipped, description: "Searches, better." };
    expect((await seedCatalog(catalog, [kit], [released])).written).toEqual([
      "tool:seed_kit_search",
    ]);
    const after = await catalog.getTool(shipped.id);
    expect(after?.description).toBe("Searches, better.");
    expect(after?.availability).toEqual(administered);
  });

  it("reads a tool stored before schemas were JSON text, and rewrites it in the new form", async () => {
    const spec = tool({
      id: "legacy_tool",
      toolset: "legacy",
      inputSchema: { type: "object", properties: { q: { type: "string" } } },
      examples: [{ title: "q", input: { q: "x" } }],
    });
    // As earlier versions wrote it: every field a top-level attribute, schemas as maps.
    await documents.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk: "TOOL#legacy_tool",
          sk: "SPEC",
          gsi1pk: "CATALOG",
          gsi1sk: "TOOLSET#legacy#TOOL#legacy_tool",
          ...spec,
          revision: 1,
          updatedAt: "2026-01-01T00:00:00.000Z",
        },
      }),
    );
    expect(await catalog.getTool("legacy_tool")).toEqual({
      ...spec,
      revision: 1,
      updatedAt: "2026-01-01T00:00:00.000Z",
    });

    const changed = { ...spec, outputSchema: { type: "object", maximum: 1e300 } };
    await catalog.putTool(changed);
    const { Item } = await documents.send(
      new GetCommand({ TableName: table.tableName, Key: { pk: "TOOL#legacy_tool", sk: "SPEC" } }),
    );
    // The maps are gone, replaced by their text: no stale copy can come back.
    expect(Item).not.toHaveProperty("inputSchema");
    expect(Item).not.toHaveProperty("outputSchema");
    expect(typeof Item?.outputSchemaJson).toBe("string");
    expect(await catalog.getTool("legacy_tool")).toMatchObject({ ...changed, revision: 2 });
  });
});
