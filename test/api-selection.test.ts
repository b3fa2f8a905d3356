import { defineTool, networkCapability, secretCapability } from "@toolbus/core";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const toolset: ToolsetSpec = {
  name: "selection_kit",
  description: "Tools with every kind of availability, for selection tests.",
  owner: "selection-tests",
  kind: "builtin",
};

function kitTool(
  id: string,
  spec: {
    category: "research" | "reference" | "enhance" | "publish" | "utility";
    availability?: { enabled?: boolean; modes?: string[]; minRole?: string };
    requires?: string[];
    optionality?: "optional" | "core";
    guidelines?: { do: string[]; dont: string[] };
    examples?: Array<{ title: string; input: unknown }>;
  },
) {
  return defineTool({
    spec: {
      id,
      toolset: toolset.name,
      title: `Kit ${id}`,
      description: `What ${id} does.`,
      usageHint: `When ${id} helps.`,
      ...spec,
    },
    input: z.object({ text: z.string() }).strict(),
    output: z.object({ echoed: z.string() }),
    execute: async (input) => ({ output: input.text, data: { echoed: input.text } }),
  });
}

const tools = [
  kitTool("kit_search", {
    category: "research",
    guidelines: { do: ["Search for recent facts."], dont: ["Search for the obvious."] },
    examples: [{ title: "A query", input: { text: "go 1.23" } }],
  }),
  kitTool("kit_review", { category: "research", availability: { modes: ["review"] } }),
  kitTool("kit_secret", { category: "research", requires: ["test_secret"] }),
  kitTool("kit_admin", {
    category: "reference",
    availability: { minRole: "admin" },
    guidelines: { do: ["Cite the source."], dont: [] },
  }),
  kitTool("kit_member", {
    category: "enhance",
    availability: { minRole: "member" },
    examples: [{ title: "Polish", input: { text: "hello" } }],
  }),
  kitTool("kit_core", { category: "utility", optionality: "core" }),
];

let system: TestToolbus;
let viewerKey: string;
let memberKey: string;

beforeAll(async () => {
  system = await startTestToolbus({
    config: { modes: { default: "draft", available: ["draft", "review"] } },
    tools,
    toolsets: [toolset],
    capabilities: [
      secretCapability("test_secret", "TEST_SECRET", "A secret no test sets."),
      networkCapability,
    ],
    secrets: {},
  });
  viewerKey = await createKey("viewer");
  memberKey = await createKey("member");
});
afterAll(() => system.stop());

async function createKey(role: string): Promise<string> {
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: `${role}-key`, role },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { key: string }).key;
}

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const text = await response.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+|stack|ZodError/);
  const body = JSON.parse(text) as { error: { code: string; message: string; details?: unknown } };
  expect(body.error.code).toBe(code);
  return body.error;
}

interface SelectionBody {
  mode: string;
  role: string;
  tools: string[];
  excluded: Array<{ tool: string; reasons: string[] }>;
}

async function selectAs(key: string, json?: unknown): Promise<SelectionBody> {
  const response = await system.request("/v1/select", {
    method: "POST",
    key,
    ...(json === undefined ? {} : { json }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as SelectionBody;
}

describe("POST /v1/select", () => {
  it("selects for the caller's role in the default mode when the body is empty", async () => {
    expect(await selectAs(system.adminKey)).toEqual({
      mode: "draft",
      role: "admin",
      tools: ["kit_search", "kit_admin", "kit_member", "kit_core"],
      excluded: [
        { tool: "kit_review", reasons: ["mode"] },
        { tool: "kit_secret", reasons: ["capability:test_secret"] },
      ],
      servedByFallback: [],
      needsConnection: [],
    });
    expect(await selectAs(system.adminKey, {})).toEqual(await selectAs(system.adminKey));
  });

  it("leaves out tools above the caller's role, saying why", async () => {
    const viewer = await selectAs(viewerKey, { mode: null });
    expect(viewer).toMatchObject({ mode: "draft", role: "viewer" });
    expect(viewer.tools).toEqual(["kit_search", "kit_core"]);
    expect(viewer.excluded).toEqual([
      { tool: "kit_review", reasons: ["mode"] },
      { tool: "kit_secret", reasons: ["capability:test_secret"] },
      { tool: "kit_admin", reasons: ["role"] },
      { tool: "kit_member", reasons: ["role"] },
    ]);
  });

  it("selects in the requested mode", async () => {
    const review = await selectAs(memberKey, { mode: "review" });
    expect(review.tools).toEqual(["kit_review", "kit_search", "kit_member", "kit_core"]);
  });

  it("lets a caller look at a lower role's selection, but not a higher one's", async () => {
    const asViewer = await selectAs(system.adminKey, { role: "viewer" });
    expect(asViewer).toEqual(await selectAs(viewerKey));
    expect(await selectAs(memberKey, { role: "member" })).toMatchObject({ role: "member" });

    const refused = await expectError(
      await system.request("/v1/select", {
        method: "POST",
        key: viewerKey,
        json: { role: "admin" },
      }),
      403,
      "forbidden",
    );
    expect(refused.details).toEqual({ requestedRole: "admin", yourRole: "viewer" });
  });

  it("applies allow and deny lists", async () => {
    const selection = await selectAs(system.adminKey, {
      allow: ["kit_search", "kit_admin", "kit_review"],
      deny: ["kit_admin"],
    });
    expect(selection.tools).toEqual(["kit_search"]);
    expect(selection.excluded).toEqual([
      { tool: "kit_review", reasons: ["mode"] },
      { tool: "kit_secret", reasons: ["capability:test_secret", "not_allowed"] },
      { tool: "kit_admin", reasons: ["denied"] },
      { tool: "kit_member", reasons: ["not_allowed"] },
      { tool: "kit_core", reasons: ["not_allowed"] },
    ]);
  });

  it("answers 400 for an unknown mode or role, naming the choices", async () => {
    const mode = await expectError(
      await system.request("/v1/select", { method: "POST", json: { mode: "party" } }),
      400,
      "invalid_request",
    );
    expect(mode.details).toEqual([{ path: "mode", message: "One of: draft, review." }]);
    const role = await expectError(
      await system.request("/v1/select", { method: "POST", json: { role: "overlord" } }),
      400,
      "invalid_request",
    );
    expect(role.details).toEqual([{ path: "role", message: "One of: viewer, member, admin." }]);
  });

  it("answers 400 listing each failing path of a bad body", async () => {
    const error = await expectError(
      await system.request("/v1/select", {
        method: "POST",
        json: { mode: 3, allow: ["Not-Snake"], deny: "kit_search", surprise: true },
      }),
      400,
      "invalid_request",
    );
    const paths = (error.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(["allow.0", "deny", "mode", "surprise"]);
    await expectError(
      await system.request("/v1/select", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{",
      }),
      400,
      "invalid_json",
    );
  });

  it("needs a key", async () => {
    await expectError(
      await system.request("/v1/select", { method: "POST", key: null }),
      401,
      "unauthorized",
    );
  });
});

describe("POST /v1/prompt", () => {
  it("returns the optional tools' section as Markdown, in category order", async () => {
    const response = await system.request("/v1/prompt", { method: "POST" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(response.headers.get("x-toolbus-dropped")).toBe("none");
    expect(response.headers.get("x-toolbus-over-budget")).toBeNull();
    const markdown = await response.text();
    expect(markdown.startsWith("# Optional tools\n")).toBe(true);
    expect(markdown.match(/^##? .+$/gm)).toEqual([
      "# Optional tools",
      "## Research",
      "## Reference",
      "## Enhance",
    ]);
    expect(markdown.match(/^### .+$/gm)).toEqual([
      "### Kit kit_search (`kit_search`)",
      "### Kit kit_admin (`kit_admin`)",
      "### Kit kit_member (`kit_member`)",
    ]);
    expect(markdown).toContain("**When to use:** When kit_search helps.");
    expect(markdown).toContain("- Search for the obvious.");
    expect(markdown).toContain('- A query: `{"text":"go 1.23"}`');
    // Only what the agent may use: not core tools, nor excluded ones, nor why they are.
    for (const absent of ["kit_core", "kit_review", "kit_secret", "test_secret", "capability"]) {
      expect(markdown).not.toContain(absent);
    }
  });

  it("answers byte-identical Markdown every time, equal to the JSON form's", async () => {
    const bodies = await Promise.all(
      [1, 2, 3].map(async () =>
        Buffer.from(
          await (await system.request("/v1/prompt", { method: "POST", json: {} })).arrayBuffer(),
        ),
      ),
    );
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);

    const json = await system.request("/v1/prompt", { method: "POST", json: { format: "json" } });
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toContain("application/json");
    const prompt = (await json.json()) as {
      markdown: string;
      tools: Array<{ id: string; category: string; whenToUse: string }>;
      dropped: { guidelines: string[]; examples: string[] };
      bytes: number;
      overBudget: boolean;
    };
    expect(Buffer.from(prompt.markdown)).toEqual(bodies[0]);
    expect(prompt.bytes).toBe(bodies[0]?.length);
    expect(prompt.tools.map((t) => t.id)).toEqual(["kit_search", "kit_admin", "kit_member"]);
    expect(prompt.tools[0]).toMatchObject({
      category: "research",
      whenToUse: "When kit_search helps.",
    });
    expect(prompt.dropped).toEqual({ guidelines: [], examples: [] });
    expect(prompt.overBudget).toBe(false);
  });

  it("describes the tools of the requested role and mode", async () => {
    const viewer = await (
      await system.request("/v1/prompt", { method: "POST", key: viewerKey })
    ).text();
    expect(viewer).toContain("(`kit_search`)");
    expect(viewer).not.toContain("kit_admin");
    const review = await (
      await system.request("/v1/prompt", {
        method: "POST",
        json: { mode: "review", role: "viewer" },
      })
    ).text();
    expect(review).toContain("(`kit_review`)");
    expect(review).not.toContain("kit_member");
  });

  it("drops guidelines, then examples, to meet a budget, and says so", async () => {
    const full = await (await system.request("/v1/prompt", { method: "POST" })).text();
    const response = await system.request("/v1/prompt", {
      method: "POST",
      json: { budgetBytes: Buffer.byteLength(full) - 1 },
    });
    expect(response.headers.get("x-toolbus-dropped")).toBe("guidelines=kit_admin");
    expect(response.headers.get("x-toolbus-over-budget")).toBeNull();
    expect(await response.text()).not.toContain("Cite the source.");

    const tiny = await system.request("/v1/prompt", { method: "POST", json: { budgetBytes: 0 } });
    expect(tiny.headers.get("x-toolbus-dropped")).toBe(
      "guidelines=kit_admin,kit_search; examples=kit_member,kit_search",
    );
    expect(tiny.headers.get("x-toolbus-over-budget")).toBe("true");
    const markdown = await tiny.text();
    for (const id of ["kit_search", "kit_admin", "kit_member"]) {
      expect(markdown).toContain(`(\`${id}\`)`);
    }
  });

  it("answers 400 for a bad format or budget, and 403 for a role above the caller's", async () => {
    for (const json of [{ format: "html" }, { budgetBytes: -1 }, { budgetBytes: 1.5 }]) {
      const error = await expectError(
        await system.request("/v1/prompt", { method: "POST", json }),
        400,
        "invalid_request",
      );
      expect((error.details as { path: string }[]).map((d) => d.path)).toEqual(Object.keys(json));
    }
    await expectError(
      await system.request("/v1/prompt", { method: "POST", json: { mode: "party" } }),
      400,
      "invalid_request",
    );
    await expectError(
      await system.request("/v1/prompt", {
        method: "POST",
        key: memberKey,
        json: { role: "admin" },
      }),
      403,
      "forbidden",
    );
  });
});

describe("calls are authorized through selection", () => {
  async function runEvents(runId: string): Promise<unknown[]> {
    await system.settle();
    const response = await system.request(`/v1/runs/${runId}/events`);
    return ((await response.json()) as { events: unknown[] }).events;
  }

  async function refused(
    key: string,
    body: { tool: string; mode?: string },
    reasons: string[],
  ): Promise<string> {
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      key,
      json: { ...body, input: { text: "hi" }, callId: "c1", wait: 5 },
    });
    const error = await expectError(response, 403, "forbidden");
    expect(error.details).toEqual({ reasons });
    // Nothing recorded, nothing announced.
    expect((await system.request(`/v1/runs/${runId}/calls/c1`)).status).toBe(404);
    expect(await runEvents(runId)).toEqual([]);
    return error.message;
  }

  async function call(key: string, body: { tool: string; mode?: string }) {
    const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
      method: "POST",
      key,
      json: { ...body, input: { text: "hi" }, wait: 10 },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as {
      status: string;
      mode?: string;
      result: { failure?: { kind: string } };
    };
  }

  it("refuses a tool not offered in the call's mode, and runs it in its mode", async () => {
    const message = await refused(system.adminKey, { tool: "kit_review" }, ["mode"]);
    expect(message).toContain("mode draft");
    expect(await call(system.adminKey, { tool: "kit_review", mode: "review" })).toMatchObject({
      status: "succeeded",
      mode: "review",
    });
  });

  it("refuses a tool above the caller's role, and runs it for a high enough role", async () => {
    const message = await refused(memberKey, { tool: "kit_admin" }, ["role"]);
    expect(message).toContain("admin");
    expect(await call(system.adminKey, { tool: "kit_admin" })).toMatchObject({
      status: "succeeded",
    });
    expect(await call(memberKey, { tool: "kit_member" })).toMatchObject({ status: "succeeded" });
  });

  it("gives every reason that applies, disabled first", async () => {
    const disabled = await system.request("/v1/tools/kit_review/disable", { method: "POST" });
    expect(disabled.status).toBe(200);
    try {
      await refused(system.adminKey, { tool: "kit_review" }, ["disabled", "mode"]);
      await refused(system.adminKey, { tool: "kit_review", mode: "review" }, ["disabled"]);
    } finally {
      await system.request("/v1/tools/kit_review/enable", { method: "POST" });
    }
  });

  it("schedules a tool whose capability is missing: the runtime fails it as unavailable", async () => {
    const result = await call(system.adminKey, { tool: "kit_secret" });
    expect(result.status).toBe("failed");
    expect(result.result.failure).toMatchObject({ kind: "unavailable" });
  });

  it("answers 400, not 403, for an unknown mode", async () => {
    const runId = system.runId();
    await expectError(
      await system.request(`/v1/runs/${runId}/calls`, {
        method: "POST",
        json: { tool: "kit_admin", input: { text: "hi" }, callId: "c1", mode: "party" },
      }),
      400,
      "invalid_request",
    );
    expect((await system.request(`/v1/runs/${runId}/calls/c1`)).status).toBe(404);
  });
});

describe("GET /v1/tools availability", () => {
  it("is the caller's selection, with reasons for what is unavailable", async () => {
    const response = await system.request("/v1/tools", { key: viewerKey });
    const { tools: listed } = (await response.json()) as {
      tools: Array<{ id: string; available: boolean; reasons?: string[] }>;
    };
    const byId = Object.fromEntries(listed.map((t) => [t.id, t]));
    expect(byId.kit_search).toMatchObject({ available: true });
    expect(byId.kit_search).not.toHaveProperty("reasons");
    expect(byId.kit_admin).toMatchObject({ available: false, reasons: ["role"] });
    expect(byId.kit_secret).toMatchObject({
      available: false,
      reasons: ["capability:test_secret"],
    });
    expect(byId.kit_review).toMatchObject({ available: false, reasons: ["mode"] });

    const draft = await system.request("/v1/tools?mode=draft&available=true", { key: viewerKey });
    const draftIds = ((await draft.json()) as { tools: Array<{ id: string }> }).tools.map(
      (t) => t.id,
    );
    expect(draftIds.sort()).toEqual(["kit_core", "kit_search"]);
  });
});
