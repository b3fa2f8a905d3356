import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { term } from "../packages/core/src/app/search/terms";
import { ToolIndex } from "../packages/core/src/app/search/tool-index";
import { words } from "../packages/core/src/app/search/words";
import { composeLocalToolbus, serveApi } from "../packages/local/src";
import {
  LocalEventBus,
  localEventBridgeClient,
  startEventBridgeServer,
} from "../packages/local/src/bus";
import { localDynamoDbClient, startDynamoDbLocal } from "../packages/local/src/dynamodb";
import type { ToolSpec } from "../packages/wire/src/model/tool";
import { benchParts, type LabelledQuery, loadSearchFixture, scoreSearch } from "./search-fixture";
import { type Measurement, measurement } from "./stats";

const LARGE_CATALOG = 1_000;
const ROUNDS = 5;

/**
 * The baseline ranking: tools by how many of the query's words (stemmed, as the index has
 * them) their text holds, ties by id. What a catalog without an index would do.
 */
function wordOverlap(tools: readonly ToolSpec[]) {
  const texts = tools.map((tool) => ({
    id: tool.id,
    terms: new Set(
      words(
        [tool.id, tool.title, tool.description, tool.usageHint, ...tool.guidelines.do].join(" "),
      ).map((word) => term(word) ?? word),
    ),
  }));
  return (query: string) => {
    const wanted = [...new Set(words(query).flatMap((word) => term(word) ?? []))];
    return texts
      .map((text) => ({ id: text.id, hits: wanted.filter((w) => text.terms.has(w)).length }))
      .filter((scored) => scored.hits > 0)
      .sort((a, b) => b.hits - a.hits || (a.id < b.id ? -1 : 1))
      .slice(0, 10)
      .map((scored) => scored.id);
  };
}

/** A catalog of `size` tools: the fixture's, then copies of them under other ids. */
function largeCatalog(tools: readonly ToolSpec[], size: number): ToolSpec[] {
  return Array.from({ length: size }, (_, i) => {
    const tool = tools[i % tools.length] as ToolSpec;
    return i < tools.length ? tool : { ...tool, id: `${tool.id.slice(0, 40)}_c${i}` };
  });
}

function p50(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function timeEach(queries: readonly LabelledQuery[], run: (query: string) => unknown): number {
  for (const query of queries) run(query.q);
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const query of queries) {
      const start = performance.now();
      run(query.q);
      samples.push(performance.now() - start);
    }
  }
  return p50(samples);
}

/**
 * Search quality on the labelled fixture (recall@1, recall@5, MRR on the tune and held-out
 * parts, against plain word overlap) and the latency of one search among 1,000 tools.
 */
export async function benchSearch(): Promise<Measurement[]> {
  const fixture = loadSearchFixture();
  const index = ToolIndex.build(fixture.tools, fixture.toolsets);
  const ranked = (query: string) =>
    index.search(query, { limit: 10, allowed: () => true }).map((hit) => hit.id);
  const overlap = wordOverlap(fixture.tools);
  const results: Measurement[] = [];
  for (const part of benchParts()) {
    const queries = fixture.queries.filter((query) => query.part === part);
    const ours = scoreSearch(queries, ranked);
    const plain = scoreSearch(queries, overlap);
    const name = (metric: string) =>
      `search: ${metric}, ${part} queries (${queries.length}), ${fixture.tools.length} tools`;
    const baseline = (value: number) => ({ name: "plain word overlap", value });
    results.push(
      measurement(name("recall@1"), "", ours.recallAt1, baseline(plain.recallAt1), "higher"),
      measurement(name("recall@5"), "", ours.recallAt5, baseline(plain.recallAt5), "higher"),
      measurement(name("MRR"), "", ours.mrr, baseline(plain.mrr), "higher"),
    );
  }

  // Timed on the scored parts' queries only: with BENCH_SEARCH_TUNE_ONLY=1, the tune part's.
  const timed = fixture.queries.filter((query) => benchParts().includes(query.part));
  const large = largeCatalog(fixture.tools, LARGE_CATALOG);
  const buildStart = performance.now();
  const largeIndex = ToolIndex.build(large, fixture.toolsets);
  const buildMs = performance.now() - buildStart;
  const largeOverlap = wordOverlap(large);
  const scanMs = timeEach(timed, largeOverlap);
  const searchMs = timeEach(timed, (query) =>
    largeIndex.search(query, { limit: 5, allowed: () => true }),
  );
  results.push(
    measurement(
      `search: one query among ${LARGE_CATALOG.toLocaleString("en-US")} tools, p50`,
      "ms",
      searchMs,
      { name: "plain word overlap scan, p50", value: scanMs },
      "lower",
    ),
    measurement(
      `search: index build for ${LARGE_CATALOG.toLocaleString("en-US")} tools (once per catalog version)`,
      "ms",
      buildMs,
      { name: "one query, p50", value: searchMs },
      "lower",
    ),
  );
  results.push(...(await benchSearchRoute(large, fixture, timed)));
  return results;
}

const ROUTE_REQUESTS = 300;

async function timeRequests(send: (i: number) => Promise<Response>): Promise<number> {
  for (let i = 0; i < 50; i++) await (await send(i)).arrayBuffer();
  const samples: number[] = [];
  for (let i = 0; i < ROUTE_REQUESTS; i++) {
    const start = performance.now();
    const response = await send(i);
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`search bench: ${response.status}`);
    samples.push(performance.now() - start);
  }
  return p50(samples);
}

/**
 * `GET /v1/tools/search` over HTTP on a stage whose catalog holds 1,000 tools, beside
 * `POST /v1/select` on the same stage: the same key check and selection without the search,
 * so the difference is what searching adds.
 */
async function benchSearchRoute(
  large: readonly ToolSpec[],
  fixture: ReturnType<typeof loadSearchFixture>,
  timed: readonly LabelledQuery[],
): Promise<Measurement[]> {
  const dynamo = await startDynamoDbLocal();
  const bus = new LocalEventBus();
  const busServer = await startEventBridgeServer(bus);
  const adminKey = `bench-${randomUUID()}-admin-key`;
  try {
    const { app, toolbus } = await composeLocalToolbus({
      dynamodb: localDynamoDbClient(dynamo.endpoint),
      eventBridge: localEventBridgeClient(busServer),
      bus,
      tableName: "toolbus-bench-search",
      busName: "toolbus-bench-search",
      adminKey,
    });
    const { catalog } = toolbus.stores;
    const builtins = new Set((await catalog.list()).tools.map((tool) => tool.id));
    for (const toolset of fixture.toolsets) {
      if (!(await catalog.getToolset(toolset.name))) await catalog.putToolset(toolset);
    }
    for (const tool of large) if (!builtins.has(tool.id)) await catalog.putTool(tool);
    const api = await serveApi(app, { port: 0 });
    try {
      const headers = { authorization: `Bearer ${adminKey}`, "content-type": "application/json" };
      const queries = timed.map((query) => encodeURIComponent(query.q));
      const search = await timeRequests((i) =>
        fetch(`${api.url}/v1/tools/search?q=${queries[i % queries.length]}`, { headers }),
      );
      const select = await timeRequests(() =>
        fetch(`${api.url}/v1/select`, { method: "POST", headers, body: "{}" }),
      );
      return [
        measurement(
          `search: GET /v1/tools/search over HTTP, ${LARGE_CATALOG.toLocaleString("en-US")} tools in the catalog, p50`,
          "ms",
          search,
          { name: "POST /v1/select on the same stage, p50", value: select },
          "lower",
        ),
      ];
    } finally {
      await api.close();
    }
  } finally {
    await busServer.close();
    await dynamo.stop();
  }
}
