import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { performance } from "node:perf_hooks";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  type CompiledSchema,
  compileSchema,
  schemaIssues,
} from "../packages/core/src/registered/json-schema";
import { composeLocalToolbus, serveApi } from "../packages/local/src";
import {
  LocalEventBus,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../packages/local/src/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
import { type Measurement, measurement, percentile, runConcurrently } from "./stats";

// ---------------------------------------------------------------------------------------------
// 1. Input validation: a registered tool's JSON Schema (@cfworker/json-schema) vs zod for a
//    built-in.
// ---------------------------------------------------------------------------------------------

/** A search-like tool's input, as a built-in would write it in zod. */
const zodInput = z.strictObject({
  query: z.string().min(1).max(200),
  limit: z.number().int().min(1).max(50).optional(),
  sort: z.enum(["relevance", "date"]).optional(),
  tags: z.array(z.string().min(1)).max(10).optional(),
  since: z.iso.date().optional(),
});

/** The same schema as JSON Schema (2020-12), as zod emits it: what a registration would carry. */
const jsonInput = z.toJSONSchema(zodInput) as Record<string, unknown>;

const VALID: unknown[] = Array.from({ length: 8 }, (_, i) => ({
  query: `release notes ${i}`,
  ...(i % 2 ? { limit: 1 + i * 5 } : {}),
  ...(i % 3 ? { sort: i % 2 ? "date" : "relevance" } : {}),
  ...(i % 4 ? { tags: ["news", `t${i}`] } : {}),
  ...(i % 5 ? { since: `2026-0${1 + (i % 9)}-1${i}` } : {}),
}));

/** Every one breaks several rules: the validator has to report them all. */
const INVALID: unknown[] = Array.from({ length: 8 }, (_, i) => ({
  query: i % 2 ? "" : 42,
  limit: i % 3 ? 0 : 2.5,
  sort: "random",
  tags: ["", `t${i}`],
  since: "yesterday",
  [`extra${i}`]: true,
}));

/** Operations per second of `op` over `inputs`, for about `ms` after a warm-up. */
function opsPerSecond(op: (input: unknown) => number, inputs: unknown[], ms = 700): number {
  let sink = 0;
  for (let i = 0; i < 2_000; i++) sink += op(inputs[i % inputs.length]);
  let ops = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    for (const input of inputs) sink += op(input);
    ops += inputs.length;
  }
  const elapsed = performance.now() - started;
  if (sink < 0) throw new Error("unreachable");
  return (ops / elapsed) * 1000;
}

/** What the API does with zod's result for a built-in: one path and message per issue. */
function zodIssues(input: unknown): number {
  const parsed = zodInput.safeParse(input);
  if (parsed.success) return 0;
  return parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(input)",
    message: issue.message,
  })).length;
}

function jsonSchemaIssues(input: unknown): number {
  return schemaIssues(jsonInput, input).length;
}

/**
 * The compiled schema's own check, called directly: what schemaIssues costs without finding
 * it in the cache (canonical JSON of the schema, SHA-256, map lookup) on every call.
 */
function bareIssues(compiled: CompiledSchema): (input: unknown) => number {
  return (input) => compiled.issues(input).length;
}

/** Microseconds per call of `op`, once per item, `rounds` times over. */
function microsEach<T>(items: readonly T[], op: (item: T) => void, rounds = 1): number {
  const started = performance.now();
  for (let round = 0; round < rounds; round++) for (const item of items) op(item);
  return ((performance.now() - started) / (items.length * rounds)) * 1000;
}

export function benchValidation(): Measurement[] {
  const bare = bareIssues(compileSchema(jsonInput));
  // Both must agree on every input, or the comparison is of different work.
  for (const input of VALID) {
    if (jsonSchemaIssues(input) !== 0 || bare(input) !== 0 || zodIssues(input) !== 0) {
      throw new Error(`validation bench: a valid input was refused: ${JSON.stringify(input)}`);
    }
  }
  for (const input of INVALID) {
    if (jsonSchemaIssues(input) < 4 || bare(input) < 4 || zodIssues(input) < 4) {
      throw new Error(`validation bench: an invalid input passed: ${JSON.stringify(input)}`);
    }
  }
  const results: Measurement[] = [];
  for (const [label, inputs] of [
    ["valid", VALID],
    ["invalid", INVALID],
  ] as const) {
    const zodOps = opsPerSecond(zodIssues, inputs);
    const schemaOps = opsPerSecond(jsonSchemaIssues, inputs);
    const bareOps = opsPerSecond(bare, inputs);
    const baseline = { name: `zod safeParse of the same schema, ${label} input`, value: zodOps };
    results.push(
      measurement(
        `input validation, ${label} input: schemaIssues (warm validator)`,
        "ops/s",
        schemaOps,
        baseline,
        "higher",
      ),
      measurement(
        `input validation, ${label} input: the compiled check alone (no cache lookup)`,
        "ops/s",
        bareOps,
        baseline,
        "higher",
      ),
    );
  }

  // The one-off cost: a schema never seen in this process (meta-schema check + resolving refs)
  // against the same call once it is compiled (canonical JSON + SHA-256 + map lookup).
  const fresh = (count: number) =>
    Array.from({ length: count }, () => ({ ...jsonInput, description: `bench ${randomUUID()}` }));
  microsEach(fresh(20), compileSchema); // warm the meta-schemas and the code paths
  const schemas = fresh(150);
  const first = microsEach(schemas, compileSchema);
  const hit = microsEach(schemas, compileSchema, 100);
  results.push(
    measurement(
      "JSON Schema compile: first compileSchema of a new schema",
      "µs",
      first,
      { name: "compileSchema of a schema already compiled (cache hit)", value: hit },
      "lower",
    ),
  );
  return results;
}

// ---------------------------------------------------------------------------------------------
// 2. Whole call path: registered http and mcp tools against a built-in, all on loopback.
// ---------------------------------------------------------------------------------------------

const API_KEY = "bench-upstream-key";
const MCP_TOKEN = "bench-mcp-token";
const FEED = `<?xml version="1.0"?><rss version="2.0"><channel><title>Bench</title><link>https://example.org/</link>
<item><title>One</title><link>https://example.org/1</link><pubDate>Sat, 21 Nov 2026 10:00:00 GMT</pubDate></item>
</channel></rss>`;

/**
 * Single-client calls per tool; for throughput, clients, passes per tool and calls per client
 * per pass. No key makes more than 60 calls to one tool (the tools' per-principal limit).
 */
const SINGLE = 40;
const CLIENTS = 4;
const PASSES = 6;
const PER_PASS = 6;
const WARM_UP = 8;

interface Upstream {
  origin: string;
  requests: number;
  close(): Promise<void>;
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ origin: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One loopback API answering at once: a small JSON item (with a key) and a small RSS feed. */
async function startHttpUpstream(): Promise<Upstream> {
  const state = { requests: 0 };
  const server = await listen((req, res) => {
    state.requests++;
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (path === "/feed.xml") {
      res.writeHead(200, { "content-type": "application/rss+xml" }).end(FEED);
      return;
    }
    const item = /^\/v1\/items\/([^/]+)$/.exec(path);
    if (item && req.headers["x-api-key"] === API_KEY) {
      const id = decodeURIComponent(item[1] ?? "");
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ id, name: "Widget" }));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
  });
  return {
    origin: server.origin,
    get requests() {
      return state.requests;
    },
    close: server.close,
  };
}

/**
 * A real MCP server on loopback with the official SDK: stateless Streamable HTTP, a fresh
 * server per request, SSE answers (the SDK's defaults), one tool answering at once.
 */
async function startMcpUpstream(): Promise<Upstream> {
  const state = { requests: 0 };
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    state.requests++;
    if (req.headers.authorization !== `Bearer ${MCP_TOKEN}`) {
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
      return;
    }
    const server = new Server({ name: "bench", version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "getItem",
          description: "Reads one inventory item by id.",
          inputSchema: {
            type: "object",
            properties: { id: { type: "string", minLength: 1 } },
            required: ["id"],
            additionalProperties: false,
          },
          outputSchema: {
            type: "object",
            properties: { id: { type: "string" }, name: { type: "string" } },
            required: ["id", "name"],
          },
          annotations: { readOnlyHint: true, openWorldHint: true },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      const id = String(request.params.arguments?.id);
      return {
        content: [{ type: "text", text: `${id}: Widget` }],
        structuredContent: { id, name: "Widget" },
      };
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const server = await listen((req, res) => {
    serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  return {
    origin: `${server.origin}/mcp`,
    get requests() {
      return state.requests;
    },
    close: server.close,
  };
}

/**
 * rss_feed's own policies (15 min cache, 60 calls a minute per principal), given to the
 * registered tools too, so every tool does the same DynamoDB work around its run: a rate-limit
 * write, a cache read (always a miss: every call's input is new) and a cache write.
 */
const POLICIES = {
  cache: { ttlSeconds: 900 },
  rateLimit: { perPrincipal: { limit: 60, windowSeconds: 60 } },
};

function httpRegistration(origin: string) {
  return {
    kind: "http",
    name: "bench_http",
    description: "A loopback inventory API",
    owner: "bench",
    auth: { header: "X-Api-Key", secret: "TOOLSET_BENCH_API_KEY" },
    tools: [
      {
        id: "bench_get_item",
        title: "Get an item",
        description: "Reads one inventory item by id.",
        category: "reference",
        usageHint: "Look up an item by id.",
        url: `${origin}/v1/items/{id}`,
        inputSchema: {
          type: "object",
          properties: { id: { type: "string", minLength: 1 } },
          required: ["id"],
          additionalProperties: false,
        },
        outputSchema: {
          type: "object",
          properties: { id: { type: "string" }, name: { type: "string" } },
          required: ["id", "name"],
        },
        ...POLICIES,
        // Offered to every role, as the built-ins are: a registration that says nothing
        // offers its tools to admins only, and the bench calls as a member.
        availability: {},
      },
    ],
  };
}

function mcpRegistration(url: string) {
  return {
    kind: "mcp",
    name: "bench_mcp",
    description: "A loopback MCP server",
    owner: "bench",
    url,
    auth: { header: "Authorization", secret: "TOOLSET_BENCH_MCP_TOKEN", prefix: "Bearer " },
    renames: { getItem: "bench_mcp_get_item" },
    // Offered to every role (see httpRegistration).
    defaults: { category: "reference", timeoutMs: 10_000, ...POLICIES, availability: {} },
  };
}

type ToolName = "builtin" | "http" | "mcp";

interface Latency {
  p50: number;
  p95: number;
}

function latency(ms: number[]): Latency {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

class Caller {
  private seq = 0;
  constructor(
    private readonly api: string,
    private readonly upstream: string,
  ) {}

  /** The call for `tool`, with an input never used before (so every call misses the cache). */
  private request(tool: ToolName): { tool: string; input: unknown } {
    const n = `${Date.now().toString(36)}-${this.seq++}`;
    if (tool === "builtin") {
      return {
        tool: "rss_feed",
        input: { action: "fetch", url: `${this.upstream}/feed.xml?n=${n}` },
      };
    }
    return {
      tool: tool === "http" ? "bench_get_item" : "bench_mcp_get_item",
      input: { id: `item-${n}` },
    };
  }

  /** One synchronous call (wait) through the API; its latency in ms. */
  async call(key: string, runId: string, tool: ToolName): Promise<number> {
    const body = JSON.stringify({ ...this.request(tool), wait: 20 });
    const t0 = performance.now();
    const response = await fetch(`${this.api}/v1/runs/${runId}/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body,
    });
    const answer = (await response.json()) as { status?: string; result?: { cached?: boolean } };
    const elapsed = performance.now() - t0;
    if (response.status !== 200 || answer.status !== "succeeded" || answer.result?.cached) {
      throw new Error(`${tool} call failed: ${response.status} ${JSON.stringify(answer)}`);
    }
    return elapsed;
  }
}

async function admin(api: string, adminKey: string, method: string, path: string, json: unknown) {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
    body: JSON.stringify(json),
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) {
    throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return body;
}

/**
 * A member key per client: each tool allows a principal 60 calls a minute, so no key makes
 * more than that per tool in this benchmark.
 */
async function memberKey(api: string, adminKey: string, name: string): Promise<string> {
  const body = await admin(api, adminKey, "POST", "/v1/keys", { name, role: "member" });
  return String(body.key);
}

export async function benchRegisteredCalls(): Promise<Measurement[]> {
  // Calls answered directly are announced just after: wait for that before stopping the bus.
  let settle = async () => {};
  const dynamo = await startDynamoDbLocal();
  const bus = new LocalEventBus();
  const busServer = await startEventBridgeServer(bus);
  const eventBridge = localEventBridgeClient(busServer);
  const dynamodb = localDynamoDbClient(dynamo.endpoint);
  const adminKey = `bench-${randomUUID()}-admin-key`;
  const secrets: Record<string, string> = {
    TOOLSET_BENCH_API_KEY: API_KEY,
    TOOLSET_BENCH_MCP_TOKEN: MCP_TOKEN,
  };
  const upstream = await startHttpUpstream();
  const mcp = await startMcpUpstream();
  try {
    const { app, toolbus } = await composeLocalToolbus({
      dynamodb,
      eventBridge,
      bus,
      tableName: "toolbus-bench-registered",
      busName: "toolbus-bench",
      adminKey,
      config: { outbound: { allowHosts: ["127.0.0.1"] } },
      secret: (name) => secrets[name],
    });
    settle = () => toolbus.settled();
    const api = await serveApi(app, { port: 0 });
    try {
      await admin(
        api.url,
        adminKey,
        "PUT",
        "/v1/registered-toolsets/bench_http",
        httpRegistration(upstream.origin),
      );
      await admin(
        api.url,
        adminKey,
        "PUT",
        "/v1/registered-toolsets/bench_mcp",
        mcpRegistration(mcp.origin),
      );
      const caller = new Caller(api.url, upstream.origin);
      const tools: ToolName[] = ["builtin", "http", "mcp"];
      const run = () => `bench-registered-${randomUUID()}`;

      // Warm-up: every tool's handler, schema check, outbound client and table paths.
      const warm = await memberKey(api.url, adminKey, "bench-warm-up");
      const warmRun = run();
      await runConcurrently(WARM_UP * tools.length, 2, async (i) => {
        await caller.call(warm, warmRun, tools[i % tools.length] as ToolName);
      });

      // One client, the tools interleaved call by call so drift hits all three alike.
      const single = await memberKey(api.url, adminKey, "bench-single");
      const singleRun = run();
      const latencies: Record<ToolName, number[]> = { builtin: [], http: [], mcp: [] };
      for (let i = 0; i < SINGLE; i++) {
        for (const tool of tools) latencies[tool].push(await caller.call(single, singleRun, tool));
      }
      const one = {
        builtin: latency(latencies.builtin),
        http: latency(latencies.http),
        mcp: latency(latencies.mcp),
      };

      // A few clients, each with its own key and run, on one tool at a time. Long blocks drift
      // (whichever tool goes first looks fastest), so the tools take turns in short passes, in
      // alternating order (ABC CBA ...), each timed over its own passes.
      const keys = await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) =>
          memberKey(api.url, adminKey, `bench-client-${i}`),
        ),
      );
      const busy: Record<ToolName, number> = { builtin: 0, http: 0, mcp: 0 };
      for (let pass = 0; pass < PASSES; pass++) {
        for (const tool of pass % 2 ? [...tools].reverse() : tools) {
          const started = performance.now();
          await Promise.all(
            keys.map(async (key) => {
              const runId = run();
              for (let i = 0; i < PER_PASS; i++) await caller.call(key, runId, tool);
            }),
          );
          // Until the bus is idle: the recorder's work for these calls is theirs, not the next
          // pass's.
          await settle();
          await bus.drain();
          busy[tool] += performance.now() - started;
        }
      }
      const calls = PASSES * CLIENTS * PER_PASS;
      const throughput = {
        builtin: (calls / busy.builtin) * 1000,
        http: (calls / busy.http) * 1000,
        mcp: (calls / busy.mcp) * 1000,
      };
      if (upstream.requests === 0 || mcp.requests === 0) {
        throw new Error("registered bench: the upstreams were never called");
      }
      await settle();
      await bus.drain();

      const names: Record<ToolName, string> = {
        builtin: "built-in rss_feed fetching a feed from the same loopback upstream",
        http: "registered http tool",
        mcp: "registered mcp tool",
      };
      const versus = (tool: ToolName, base: ToolName) => {
        const label = `${names[tool]} (loopback), sync call`;
        const baseline = (clients: string, value: number) => ({
          name: `${names[base]}, ${clients}`,
          value,
        });
        return [
          measurement(
            `${label}, 1 client: p50`,
            "ms",
            one[tool].p50,
            baseline("1 client", one[base].p50),
            "lower",
          ),
          measurement(
            `${label}, 1 client: p95`,
            "ms",
            one[tool].p95,
            baseline("1 client", one[base].p95),
            "lower",
          ),
          measurement(
            `${label}, ${CLIENTS} clients: calls/s`,
            "calls/s",
            throughput[tool],
            baseline(`${CLIENTS} clients`, throughput[base]),
            "higher",
          ),
        ];
      };
      return [...versus("http", "builtin"), ...versus("mcp", "http")];
    } finally {
      await api.close();
    }
  } finally {
    await upstream.close();
    await mcp.close();
    await settle();
    await bus.drain();
    bus.close();
    eventBridge.destroy();
    dynamodb.destroy();
    await busServer.close();
    await dynamo.stop();
  }
}
