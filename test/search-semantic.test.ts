import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { defineTool } from "@toolbus/core";
import { parseStageConfig } from "@toolbus/core/config";
import { createLogger, type LogRecord } from "@toolbus/core/observability";
import { createHttpClient, OutboundError } from "@toolbus/core/outbound";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  fuse,
  SemanticRanking,
  semanticRanking,
  textHash,
  toolText,
} from "../packages/core/src/app/search/semantic";
import { SearchService } from "../packages/core/src/app/search/service";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import { DynamoVectorStore, unpackVector } from "../packages/core/src/store/dynamodb/embeddings";
import { testDynamoDbClient } from "./support/dynamodb";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// The embedding path's wiring only: a loopback OpenAI-compatible server answers FIXED vectors
// (each keyword below lights one dimension), so what is asserted is what is sent, stored,
// kept and fused, never how well a real model ranks.

const DIMENSIONS = 8;
const MODEL = "fixed-test-embedder";
// Query words no word-based ranking (stems, typos, synonyms) relates to the tools' words.
const KEYWORDS: Record<string, number> = {
  xyzzy: 0,
  directory: 0,
  plugh: 1,
  image: 1,
  frobnicate: 2,
  knowledge: 2,
};

/** The fixed vector of a text: 1 in the dimension of each keyword it holds. */
function fixedVector(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z]+/)) {
    const dimension = KEYWORDS[word];
    if (dimension !== undefined) vector[dimension] = 1;
  }
  return vector;
}

interface EmbeddingsRequest {
  model: string;
  input: string[];
  dimensions?: number;
  authorization: string | undefined;
}

type Mode = "ok" | "500" | "not-json" | "wrong-count" | "not-finite";

let mode: Mode = "ok";
const requests: EmbeddingsRequest[] = [];
let server: Server;
let baseUrl: string;

const toolset: ToolsetSpec = {
  name: "sem_kit",
  description: "Tools for the semantic search tests.",
  owner: "search-tests",
  kind: "builtin",
};

function kitTool(
  id: string,
  title: string,
  description: string,
  availability?: { minRole?: string },
) {
  return defineTool({
    spec: {
      id,
      toolset: toolset.name,
      title,
      description,
      usageHint: "When the task calls for it.",
      category: "utility",
      ...(availability ? { availability } : {}),
    },
    input: z.object({ text: z.string() }).strict(),
    output: z.object({ echoed: z.string() }),
    execute: async (input) => ({ output: input.text, data: { echoed: input.text } }),
  });
}

const tools = [
  kitTool("sem_dir", "Directory lister", "Lists the entries of a directory."),
  kitTool("sem_image", "Image resizer", "Resizes an image to given sizes."),
  kitTool("sem_notes", "Knowledge graph", "Stores facts in a knowledge graph."),
  kitTool("sem_dir_purge", "Directory purger", "Purges a directory for good.", {
    minRole: "admin",
  }),
];
const textOf = (id: string) => {
  const tool = tools.find((candidate) => candidate.spec.id === id);
  if (!tool) throw new Error(id);
  return toolText(tool.spec as Parameters<typeof toolText>[0]);
};

const embeddings = {
  url: "",
  model: MODEL,
  apiKey: "EMBEDDINGS_KEY",
  dimensions: DIMENSIONS,
};

let system: TestToolbus;
let viewerKey: string;
const logLines: LogRecord[] = [];

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Omit<
      EmbeddingsRequest,
      "authorization"
    >;
    if (request.method !== "POST" || request.url !== "/v1/embeddings") {
      response.writeHead(404).end();
      return;
    }
    requests.push({ ...body, authorization: request.headers.authorization });
    if (mode === "500") {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "down" } }));
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    if (mode === "not-json") {
      response.end("<html>not an embedding</html>");
      return;
    }
    const inputs = mode === "wrong-count" ? body.input.slice(1) : body.input;
    response.end(
      JSON.stringify({
        object: "list",
        model: body.model,
        data: inputs.map((input, index) => ({
          object: "embedding",
          index,
          embedding: mode === "not-finite" ? fixedVector(input).map(() => "x") : fixedVector(input),
        })),
        usage: { prompt_tokens: 1, total_tokens: 1 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  embeddings.url = baseUrl;
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      search: { embeddings },
    },
    tools,
    toolsets: [toolset],
    secrets: { EMBEDDINGS_KEY: "sk-test-embeddings" },
    log: createLogger({ service: "toolbus", sink: (line) => logLines.push(line) }),
  });
  await system.toolbus.seed();
  const response = await system.request("/v1/keys", {
    method: "POST",
    json: { name: "semantic-viewer", role: "viewer" },
  });
  expect(response.status).toBe(201);
  viewerKey = ((await response.json()) as { key: string }).key;
});
afterAll(async () => {
  await system?.stop();
  await new Promise((resolve) => server?.close(resolve));
});
beforeEach(() => {
  mode = "ok";
  requests.length = 0;
});

interface Found {
  tools: { id: string; score: number; matched: string[] }[];
}

async function search(q: string, key: string | undefined = viewerKey, json?: object) {
  const response = json
    ? await system.request("/v1/tools/search", {
        method: "POST",
        key: key ?? system.adminKey,
        json: { q, ...json },
      })
    : await system.request(`/v1/tools/search?q=${encodeURIComponent(q)}&limit=10`, {
        key: key ?? system.adminKey,
      });
  expect(response.status).toBe(200);
  return ((await response.json()) as Found).tools;
}

const ids = (found: Found["tools"]) => found.map((tool) => tool.id);
const inputsSent = () => requests.flatMap((request) => request.input);

describe("semantic search wiring (fixed vectors, no quality claim)", () => {
  it("finds by meaning a tool that shares no word with the query, sending only visible tools", async () => {
    const found = await search("xyzzy");
    expect(ids(found)).toContain("sem_dir");
    // Found by the semantic ranking alone: no field matched a word.
    expect(found.find((tool) => tool.id === "sem_dir")?.matched).toEqual([]);
    expect(ids(found)).not.toContain("sem_dir_purge");
    // The viewer's tools and the query, each once; the admin's tool never sent for a viewer.
    expect(inputsSent().sort()).toEqual(
      [textOf("sem_dir"), textOf("sem_image"), textOf("sem_notes"), "xyzzy"].sort(),
    );
    for (const request of requests) {
      expect(request.model).toBe(MODEL);
      expect(request.dimensions).toBe(DIMENSIONS);
      expect(request.authorization).toBe("Bearer sk-test-embeddings");
    }
  });

  it("embeds each tool once: another query, the same query, another role's index", async () => {
    const pictures = await search("plugh");
    expect(ids(pictures)[0]).toBe("sem_image");
    expect(requests.map((request) => request.input)).toEqual([["plugh"]]);

    // The same query again: its vector is kept.
    requests.length = 0;
    expect(ids(await search("plugh"))[0]).toBe("sem_image");
    expect(requests).toEqual([]);

    // The admin sees one more tool: a new index, and only that tool is embedded (the query's
    // vector is kept too).
    requests.length = 0;
    const asAdmin = await search("xyzzy", system.adminKey);
    expect(ids(asAdmin)).toEqual(expect.arrayContaining(["sem_dir", "sem_dir_purge"]));
    expect(requests.map((request) => request.input)).toEqual([[textOf("sem_dir_purge")]]);
  });

  it("stores vectors in the table: another process reads them instead of asking again", async () => {
    const client = testDynamoDbClient();
    try {
      const stored = await client.send(
        new GetItemCommand({
          TableName: system.tableName,
          Key: {
            pk: { S: `EMBED#${MODEL}#${textHash(textOf("sem_dir"), DIMENSIONS)}` },
            sk: { S: "VECTOR" },
          },
        }),
      );
      const vector = unpackVector(stored.Item?.vector?.B);
      expect(vector && [...vector]).toEqual(fixedVector(textOf("sem_dir")));

      const config = parseStageConfig({
        outbound: { allowHosts: ["127.0.0.1"] },
        search: { embeddings },
      });
      const configured = config.search?.embeddings;
      if (!configured) throw new Error("search.embeddings not parsed");
      const semantic = semanticRanking({
        config: configured,
        http: createHttpClient(config.outbound),
        secret: (name) => (name === "EMBEDDINGS_KEY" ? "sk-test-embeddings" : undefined),
        store: new DynamoVectorStore({
          client: createDocumentClient(client),
          tableName: system.tableName,
        }),
      });
      const service = new SearchService({ selection: system.toolbus.apiDeps.selection, semantic });
      const found = await service.search(
        { id: "other-process-admin", role: "admin" },
        { query: "frobnicate" },
      );
      expect(found.tools[0]?.id).toBe("sem_notes");
      // Every tool's vector came from the table: only the query was embedded.
      expect(requests.map((request) => request.input)).toEqual([["frobnicate"]]);
    } finally {
      client.destroy();
    }
  });

  it("never scores or returns a tool the caller may not use", async () => {
    // The viewer may not see the purger: never found, by meaning or by words.
    for (const q of ["xyzzy", "directory"]) {
      expect(ids(await search(q))).not.toContain("sem_dir_purge");
    }
    // Denied by the request itself: out of both rankings.
    const denied = await search("xyzzy", system.adminKey, { deny: ["sem_dir"] });
    expect(ids(denied)).not.toContain("sem_dir");
    expect(ids(denied)).toContain("sem_dir_purge");
    const allowed = await search("xyzzy", system.adminKey, { allow: ["sem_image"] });
    expect(ids(allowed).every((id) => id === "sem_image")).toBe(true);
  });

  it("ranks by words alone when the provider fails, warning once", async () => {
    const warnings = () =>
      logLines.filter((line) => line.message.startsWith("search: the embeddings provider failed"));
    const before = warnings().length;
    const failures: [Mode, string][] = [
      ["500", "xyzzy zork"],
      ["not-json", "xyzzy gnusto"],
      ["wrong-count", "xyzzy rezrov"],
      ["not-finite", "xyzzy frotz"],
    ];
    for (const [failing, q] of failures) {
      mode = failing;
      requests.length = 0;
      // No word of it matches: without the semantic ranking nothing is found, and no error.
      expect(ids(await search(q))).not.toContain("sem_dir");
      expect(requests.length).toBeGreaterThan(0);
    }
    // The lexical ranking still answers what words find.
    mode = "500";
    const byWords = await search("directory lister");
    expect(ids(byWords)[0]).toBe("sem_dir");
    expect(byWords[0]?.matched.length).toBeGreaterThan(0);
    expect(warnings().length - before).toBe(1);

    // Back up: the failed query vector was not kept.
    mode = "ok";
    requests.length = 0;
    expect(ids(await search("xyzzy rezrov"))).toContain("sem_dir");
    expect(requests.map((request) => request.input)).toEqual([["xyzzy rezrov"]]);
  });
});

describe("SemanticRanking over the table, with a stand-in embedder", () => {
  const many = Array.from({ length: 150 }, (_, i) => ({
    id: `bulk_${i}`,
    title: `Bulk tool ${i}`,
    description: i === 7 ? "Keeps a plugh." : `Does thing number ${i}.`,
    usageHint: "Never.",
  })) as unknown as ToolSpec[];
  const lexicalNone = () => [];

  it("embeds in batches of at most 100, stores in chunks, and reads them all back", async () => {
    const batches: number[] = [];
    const embedder = {
      embed: async (inputs: readonly string[]) => {
        batches.push(inputs.length);
        return inputs.map((input) => Float32Array.from(fixedVector(input).map((v) => v + 0.001)));
      },
    };
    const client = testDynamoDbClient();
    try {
      const store = new DynamoVectorStore({
        client: createDocumentClient(client),
        tableName: system.tableName,
      });
      const rankingOf = () =>
        new SemanticRanking({ embedder, store, model: "bulk-model", weight: 1 });
      const request = {
        query: "plugh",
        version: "bulk-v1",
        tools: many,
        limit: 3,
        allowed: () => true,
        lexical: lexicalNone,
      };
      expect((await rankingOf().rank(request))[0]?.id).toBe("bulk_7");
      // 150 tools in two requests, then the query.
      expect([...batches].sort((a, b) => a - b)).toEqual([1, 50, 100]);
      const stored = await store.get(
        "bulk-model",
        many.map((tool) => textHash(toolText(tool), undefined)),
      );
      expect(stored.size).toBe(150);
      // A new process: every tool's vector from the table, only the query embedded.
      batches.length = 0;
      expect((await rankingOf().rank(request))[0]?.id).toBe("bulk_7");
      expect(batches).toEqual([1]);
    } finally {
      client.destroy();
    }
  });

  it("skips a provider that did not answer for a while, then asks again", async () => {
    let calls = 0;
    let silent = true;
    const embedder = {
      embed: async (inputs: readonly string[]) => {
        calls++;
        if (silent) throw new OutboundError("timeout", "no answer in time");
        return inputs.map((input) => Float32Array.from(fixedVector(input)));
      },
    };
    const stored = new Map<string, Float32Array>();
    const store = {
      get: async (_model: string, hashes: readonly string[]) =>
        new Map(
          hashes.flatMap((hash) => (stored.has(hash) ? [[hash, stored.get(hash)]] : [])) as [
            string,
            Float32Array,
          ][],
        ),
      put: async (_model: string, vectors: ReadonlyMap<string, Float32Array>) => {
        for (const [hash, vector] of vectors) stored.set(hash, vector);
      },
    };
    let now = 0;
    const warnings: string[] = [];
    const log = createLogger({
      service: "toolbus",
      sink: (line) => {
        if (line.level === "WARN") warnings.push(line.message);
      },
    });
    const ranking = new SemanticRanking({
      embedder,
      store,
      model: "m",
      weight: 1,
      log,
      now: () => now,
    });
    const lexical = [{ id: "bulk_1", score: 1, matched: ["title" as const] }];
    const request = {
      query: "plugh",
      version: "v",
      tools: many.slice(0, 10),
      limit: 5,
      allowed: () => true,
      lexical: () => lexical,
    };
    expect(await ranking.rank(request)).toEqual(lexical);
    const asked = calls;
    expect(asked).toBeGreaterThan(0);
    now = 10_000;
    expect(await ranking.rank(request)).toEqual(lexical);
    expect(calls).toBe(asked);
    now = 40_000;
    silent = false;
    const found = await ranking.rank(request);
    expect(calls).toBeGreaterThan(asked);
    expect(found.map((hit) => hit.id)).toContain("bulk_7");
    expect(warnings).toHaveLength(1);
  });
});

describe("fusion", () => {
  it("adds reciprocal ranks (k = 60), the semantic one weighted", () => {
    const lexical = [
      { id: "a", score: 9, matched: ["title" as const] },
      { id: "b", score: 5, matched: ["description" as const] },
    ];
    const fused = fuse(lexical, ["c", "b"], 1, 10);
    expect(fused.map((hit) => hit.id)).toEqual(["b", "a", "c"]);
    expect(fused[0]?.score).toBeCloseTo(2 / 62, 6);
    expect(fused[2]).toEqual({ id: "c", score: Math.round((1 / 61) * 1e6) / 1e6, matched: [] });
    // Weighted lightly, the semantic ranking cannot lift c over a.
    expect(fuse(lexical, ["c"], 0.5, 10).map((hit) => hit.id)).toEqual(["a", "b", "c"]);
    expect(fuse(lexical, ["c", "b"], 1, 1)).toHaveLength(1);
  });
});

describe("search.embeddings configuration", () => {
  const valid = { url: "https://api.example.com/v1", model: "text-embedding-3-small" };
  it("takes an https API (http only on loopback), a model, a secret's name", () => {
    const config = parseStageConfig({
      search: { embeddings: { ...valid, apiKey: "OPENAI_API_KEY", dimensions: 256 } },
    });
    expect(config.search?.embeddings).toEqual({
      ...valid,
      apiKey: "OPENAI_API_KEY",
      dimensions: 256,
      weight: 1,
    });
    expect(parseStageConfig({}).search).toBeUndefined();
    expect(
      parseStageConfig({ search: { embeddings: { ...valid, url: "http://localhost:8080/v1" } } })
        .search?.embeddings?.url,
    ).toBe("http://localhost:8080/v1");
  });
  it.each([
    ["an unknown key", { ...valid, modle: "x" }, /search\.embeddings/],
    ["plain http to another host", { ...valid, url: "http://api.example.com/v1" }, /https/],
    ["a key instead of a secret's name", { ...valid, apiKey: "sk-live-123" }, /apiKey/],
    ["no model", { url: valid.url }, /model/],
    ["a weight of 0", { ...valid, weight: 0 }, /weight/],
  ])("refuses %s at start", (_, given, problem) => {
    expect(() => parseStageConfig({ search: { embeddings: given } })).toThrow(problem);
  });
  it("refuses an unknown key beside embeddings", () => {
    expect(() => parseStageConfig({ search: { embedding: valid } })).toThrow(/search/);
  });
});
