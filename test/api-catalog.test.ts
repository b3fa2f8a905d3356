import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

interface ToolView {
  id: string;
  toolset: string;
  revision: number;
  available?: boolean;
  availability: { enabled: boolean; modes?: string[] };
}

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus({
    config: { modes: { default: "default", available: ["default", "review"] } },
  });
  const kit = await system.request("/v1/toolsets/test_kit", {
    method: "PUT",
    json: { name: "test_kit", description: "Tools registered by tests", owner: "catalog-tests" },
  });
  expect(kit.status).toBe(201);
});
afterAll(() => system.stop());

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("server")).toBeNull();
  const text = await response.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+|stack/);
  const body = JSON.parse(text) as { error: { code: string; message: string; details?: unknown } };
  expect(body.error.code).toBe(code);
  return body.error;
}

async function tools(query = ""): Promise<ToolView[]> {
  const response = await system.request(`/v1/tools${query}`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { tools: ToolView[] }).tools;
}

function toolBody(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    toolset: "test_kit",
    title: `Tool ${id}`,
    description: "Registered by a test.",
    category: "utility",
    usageHint: "Only in tests.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    ...overrides,
  };
}

describe("reading the catalog", () => {
  it("lists the built-in tools with revisions, and availability from this stage's capabilities", async () => {
    const list = await tools();
    const ids = list.map((tool) => tool.id);
    expect(ids).toEqual(expect.arrayContaining(["readability_analyzer", "static_links"]));
    // The test stage has no GITHUB_TOKEN and no calendar source: those tools are listed as
    // unavailable, with the capability named; every other built-in tool is available.
    const needsSecrets = new Set(["github_api", "calendar"]);
    for (const tool of list.filter((t) => t.toolset !== "test_kit")) {
      expect(tool).toMatchObject({
        revision: expect.any(Number),
        available: !needsSecrets.has(tool.id),
      });
    }
    expect(list.find((t) => t.id === "github_api")).toMatchObject({
      reasons: ["capability:github_token"],
    });
  });

  it("filters by category and by toolset", async () => {
    expect((await tools("?category=enhance")).map((t) => t.id)).toEqual(["readability_analyzer"]);
    expect((await tools("?toolset=static_links")).map((t) => t.id)).toEqual(["static_links"]);
    expect(await tools("?toolset=static_links&category=enhance")).toEqual([]);
  });

  it("rejects filters that cannot match, naming the parameter", async () => {
    const category = await expectError(
      await system.request("/v1/tools?category=astrology"),
      400,
      "invalid_request",
    );
    expect(category.details).toEqual([{ path: "category", message: expect.any(String) }]);
    const available = await expectError(
      await system.request("/v1/tools?available=maybe"),
      400,
      "invalid_request",
    );
    expect(available.details).toEqual([{ path: "available", message: expect.any(String) }]);
    const mode = await expectError(
      await system.request("/v1/tools?mode=party"),
      400,
      "invalid_request",
    );
    expect(mode.details).toEqual([{ path: "mode", message: expect.stringContaining("review") }]);
  });

  it("judges availability by enabled and mode", async () => {
    const put = await system.request("/v1/tools/review_only", {
      method: "PUT",
      json: toolBody("review_only", { availability: { modes: ["review"] } }),
    });
    expect(put.status).toBe(201);

    const all = await tools();
    expect(all.find((t) => t.id === "review_only")).toMatchObject({ available: false });
    expect((await tools("?mode=default")).map((t) => t.id)).not.toContain("review_only");
    expect((await tools("?mode=review")).find((t) => t.id === "review_only")).toMatchObject({
      available: true,
    });
    // Unavailable: review_only (mode), and the tools whose capabilities this stage lacks.
    expect((await tools("?available=false")).map((t) => t.id).sort()).toEqual([
      "calendar",
      "github_api",
      "review_only",
    ]);
    expect((await tools("?mode=review&available=true")).map((t) => t.id)).toContain("review_only");
  });

  it("gets one tool with its revision as ETag", async () => {
    const response = await system.request("/v1/tools/readability_analyzer");
    expect(response.status).toBe(200);
    const tool = (await response.json()) as ToolView;
    expect(tool).toMatchObject({ id: "readability_analyzer", toolset: "text_analysis" });
    expect(response.headers.get("etag")).toBe(`"${tool.revision}"`);
  });

  it("answers 404 for an unknown tool or toolset and 400 for an impossible id", async () => {
    await expectError(await system.request("/v1/tools/no_such_tool"), 404, "not_found");
    await expectError(await system.request("/v1/toolsets/no_such_set"), 404, "not_found");
    const bad = await expectError(
      await system.request("/v1/tools/Not-Snake"),
      400,
      "invalid_request",
    );
    expect(bad.details).toEqual([{ path: "id", message: expect.any(String) }]);
  });

  it("lists toolsets and gets one with its tools", async () => {
    const list = await system.request("/v1/toolsets");
    const { toolsets } = (await list.json()) as { toolsets: { name: string; revision: number }[] };
    expect(toolsets.map((t) => t.name)).toEqual(
      expect.arrayContaining(["static_links", "text_analysis", "test_kit"]),
    );

    const one = await system.request("/v1/toolsets/text_analysis");
    expect(one.status).toBe(200);
    const toolset = (await one.json()) as { name: string; revision: number; tools: ToolView[] };
    expect(toolset.name).toBe("text_analysis");
    expect(toolset.tools.map((t) => t.id)).toEqual(["readability_analyzer"]);
    expect(one.headers.get("etag")).toBe(`"${toolset.revision}"`);
  });
});

describe("administering the catalog", () => {
  it("registers a tool (201), replaces it (200) and refuses a stale If-Match (409)", async () => {
    const created = await system.request("/v1/tools/kit_echo", {
      method: "PUT",
      json: toolBody("kit_echo"),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("etag")).toBe('"1"');
    expect(created.headers.get("location")).toBe("/v1/tools/kit_echo");
    expect(await created.json()).toMatchObject({ id: "kit_echo", revision: 1 });

    const replaced = await system.request("/v1/tools/kit_echo", {
      method: "PUT",
      headers: { "if-match": '"1"' },
      json: toolBody("kit_echo", { title: "Echo, renamed" }),
    });
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({ title: "Echo, renamed", revision: 2 });

    const stale = await system.request("/v1/tools/kit_echo", {
      method: "PUT",
      headers: { "if-match": '"1"' },
      json: toolBody("kit_echo", { title: "Lost update" }),
    });
    await expectError(stale, 409, "conflict");
    const current = (await (await system.request("/v1/tools/kit_echo")).json()) as {
      title: string;
    };
    expect(current.title).toBe("Echo, renamed");
  });

  it("rejects an If-Match that is not a revision", async () => {
    const response = await system.request("/v1/tools/kit_echo/disable", {
      method: "POST",
      headers: { "if-match": "yesterday" },
    });
    const error = await expectError(response, 400, "invalid_request");
    expect(error.details).toEqual([{ path: "if-match", message: expect.any(String) }]);
  });

  it("rejects a body whose id differs from the path, or whose toolset does not exist", async () => {
    const mismatch = await expectError(
      await system.request("/v1/tools/kit_a", { method: "PUT", json: toolBody("kit_b") }),
      400,
      "invalid_request",
    );
    expect(mismatch.details).toEqual([{ path: "id", message: expect.any(String) }]);
    const orphan = await expectError(
      await system.request("/v1/tools/kit_orphan", {
        method: "PUT",
        json: toolBody("kit_orphan", { toolset: "missing_set" }),
      }),
      400,
      "invalid_request",
    );
    expect(orphan.message).toContain("missing_set");
    await expectError(await system.request("/v1/tools/kit_orphan"), 404, "not_found");
    await expectError(
      await system.request("/v1/toolsets/other", {
        method: "PUT",
        json: { name: "not_other", description: "d", owner: "o" },
      }),
      400,
      "invalid_request",
    );
  });

  it("refuses to move a tool owned by another toolset, naming both owners", async () => {
    const response = await system.request("/v1/tools/readability_analyzer", {
      method: "PUT",
      json: toolBody("readability_analyzer"),
    });
    const error = await expectError(response, 409, "conflict");
    expect(error.message).toContain("text_analysis");
    expect(error.message).toContain("catalog-tests");
  });

  it("replaces a toolset of the same owner, and refuses one of another owner naming both", async () => {
    const created = await system.request("/v1/toolsets/kit_owned", {
      method: "PUT",
      json: { name: "kit_owned", description: "First", owner: "team-a" },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("location")).toBe("/v1/toolsets/kit_owned");
    const replaced = await system.request("/v1/toolsets/kit_owned", {
      method: "PUT",
      headers: { "if-match": created.headers.get("etag") ?? "" },
      json: { name: "kit_owned", description: "Second", owner: "team-a" },
    });
    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({ description: "Second", revision: 2 });

    const clash = await system.request("/v1/toolsets/kit_owned", {
      method: "PUT",
      json: { name: "kit_owned", description: "Mine now", owner: "team-b" },
    });
    const error = await expectError(clash, 409, "conflict");
    expect(error.message).toContain("team-a");
    expect(error.message).toContain("team-b");
  });

  it("lists every failing path of an invalid spec", async () => {
    const response = await system.request("/v1/tools/kit_bad", {
      method: "PUT",
      json: { ...toolBody("kit_bad", { category: "astrology", timeoutMs: 5 }), title: undefined },
    });
    const error = await expectError(response, 400, "invalid_request");
    const paths = (error.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(["category", "timeoutMs", "title"]);
  });

  it("refuses a tool nobody could call: unknown role, mode, capability or fallback, each path named", async () => {
    const response = await system.request("/v1/tools/kit_unreachable", {
      method: "PUT",
      json: toolBody("kit_unreachable", {
        availability: { minRole: "god", modes: ["default", "séance"] },
        requires: ["network", "telepathy"],
        fallback: "kit_nowhere",
      }),
    });
    const error = await expectError(response, 400, "invalid_request");
    expect(error.message).toContain("availability.minRole");
    const details = error.details as { path: string; message: string }[];
    expect(details.map((d) => d.path).sort()).toEqual([
      "availability.minRole",
      "availability.modes.1",
      "fallback",
      "requires.1",
    ]);
    expect(details.find((d) => d.path === "availability.minRole")?.message).toContain("admin");
    expect((await system.request("/v1/tools/kit_unreachable")).status).toBe(404);
  });

  it("refuses schemas that are not valid JSON Schema and examples that do not match the input schema", async () => {
    const response = await system.request("/v1/tools/kit_bad_schema", {
      method: "PUT",
      json: toolBody("kit_bad_schema", {
        inputSchema: { type: "object", properties: { n: { type: "nummber" } } },
        outputSchema: { type: "object", required: "everything" },
        examples: [{ title: "any", input: { n: "x" } }],
      }),
    });
    const error = await expectError(response, 400, "invalid_request");
    const paths = (error.details as { path: string }[]).map((d) => d.path).sort();
    // The examples are checked only against a schema that compiles.
    expect(paths).toEqual(["inputSchema", "outputSchema"]);

    const mismatched = await system.request("/v1/tools/kit_bad_example", {
      method: "PUT",
      json: toolBody("kit_bad_example", {
        inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
        examples: [
          { title: "fine", input: { n: 1 } },
          { title: "wrong", input: { n: "one" } },
        ],
      }),
    });
    const wrong = await expectError(mismatched, 400, "invalid_request");
    expect((wrong.details as { path: string }[]).map((d) => d.path)).toEqual(["examples.1.input"]);
  });

  it("stores and serves a schema with numbers DynamoDB cannot hold (1e300, beyond 2^53)", async () => {
    const text = `{"type":"object","properties":{"n":{"type":"number","maximum":1e300,"minimum":-123456789012345678901234567890}}}`;
    const body = { ...toolBody("kit_wide_numbers"), inputSchema: JSON.parse(text) };
    const created = await system.request("/v1/tools/kit_wide_numbers", {
      method: "PUT",
      json: body,
    });
    expect(created.status).toBe(201);
    const read = (await (await system.request("/v1/tools/kit_wide_numbers")).json()) as {
      inputSchema: unknown;
    };
    expect(read.inputSchema).toEqual(JSON.parse(text));
  });

  it("refuses unknown fields in a tool or toolset, and takes back what a read returned", async () => {
    const unknown = await system.request("/v1/tools/kit_colour", {
      method: "PUT",
      json: toolBody("kit_colour", { colour: "blue" }),
    });
    const error = await expectError(unknown, 400, "invalid_request");
    expect(error.details).toEqual([{ path: "colour", message: "unknown field" }]);

    const created = await system.request("/v1/tools/kit_roundtrip", {
      method: "PUT",
      json: toolBody("kit_roundtrip"),
    });
    expect(created.status).toBe(201);
    const read = await (await system.request("/v1/tools/kit_roundtrip")).json();
    const again = await system.request("/v1/tools/kit_roundtrip", { method: "PUT", json: read });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ id: "kit_roundtrip", revision: 2 });
  });

  it("disables and enables a tool, with If-Match", async () => {
    const disabled = await system.request("/v1/tools/kit_echo/disable", { method: "POST" });
    expect(disabled.status).toBe(200);
    const tool = (await disabled.json()) as ToolView;
    expect(tool.availability.enabled).toBe(false);
    expect(disabled.headers.get("etag")).toBe(`"${tool.revision}"`);
    expect((await tools("?available=false")).map((t) => t.id)).toContain("kit_echo");

    const stale = await system.request("/v1/tools/kit_echo/enable", {
      method: "POST",
      headers: { "if-match": `"${tool.revision - 1}"` },
    });
    await expectError(stale, 409, "conflict");

    const enabled = await system.request("/v1/tools/kit_echo/enable", {
      method: "POST",
      headers: { "if-match": `"${tool.revision}"` },
    });
    expect(enabled.status).toBe(200);
    expect(await enabled.json()).toMatchObject({
      availability: { enabled: true },
      revision: tool.revision + 1,
    });
    await expectError(
      await system.request("/v1/tools/no_such_tool/enable", { method: "POST" }),
      404,
      "not_found",
    );
  });

  it("refuses calls to a disabled tool without scheduling them", async () => {
    await system.request("/v1/tools/static_links/disable", { method: "POST" });
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "static_links", input: {}, callId: "c1" },
    });
    await expectError(response, 403, "forbidden");
    await system.request("/v1/tools/static_links/enable", { method: "POST" });
    expect((await system.request(`/v1/runs/${runId}/calls/c1`)).status).toBe(404);
  });

  it("answers 415 for a non-JSON body and 400 for malformed JSON", async () => {
    await expectError(
      await system.request("/v1/toolsets/test_kit", {
        method: "PUT",
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ name: "test_kit", description: "d", owner: "o" }),
      }),
      415,
      "unsupported_media_type",
    );
    await expectError(
      await system.request("/v1/toolsets/test_kit", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: '{"name": "test_kit",',
      }),
      400,
      "invalid_json",
    );
    const kit = (await (await system.request("/v1/toolsets/test_kit")).json()) as {
      revision: number;
    };
    expect(kit.revision).toBe(1);
  });
});
