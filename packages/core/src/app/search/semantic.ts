import type { ToolSpec } from "@toolbus/wire/model/tool";
import * as z from "zod";
import type { StageConfig } from "../../config";
import type { Logger } from "../../observability/log";
import { OutboundError } from "../../outbound/errors";
import type { HttpClient, SecretSource } from "../../outbound/types";
import { sha256Hex } from "../../util/canonical-json";
import type { SearchHit } from "./tool-index";

/** `search.embeddings` of the stage configuration. */
export type EmbeddingsConfig = NonNullable<NonNullable<StageConfig["search"]>["embeddings"]>;

/** Reciprocal rank fusion's constant: a rank r counts 1 / (k + r). */
export const RRF_K = 60;
/** Inputs in one embeddings request, at most. */
export const MAX_BATCH = 100;
/** Embeddings requests of one catalog version under way at once. */
const PARALLEL_BATCHES = 4;
/** A search waits this long for its query's vector, then ranks by words alone. */
const QUERY_TIMEOUT_MS = 5_000;
/** And this long for one batch of tools' vectors. */
const BATCH_TIMEOUT_MS = 30_000;
/** After a provider that did not answer (timeout, network), searches skip it this long. */
const PAUSE_AFTER_SILENCE_MS = 30_000;
/** Characters of a tool's text, or of a query, sent to be embedded: well within any model's window. */
const MAX_INPUT_CHARS = 2_000;
/** Tools the semantic ranking offers to the fusion, at least (more when the limit is higher). */
const SEMANTIC_DEPTH = 50;
/** Catalog versions whose vectors are kept by tool, per process (as the lexical indexes). */
const KEPT_VERSIONS = 8;
/** Vectors kept by text hash, per process: a new catalog version reuses its unchanged tools'. */
const KEPT_VECTORS = 10_000;
/** Query vectors kept, per process. */
const KEPT_QUERIES = 500;

/** Where tool vectors are stored, by model and the hash of the text they embed. */
export interface VectorStore {
  get(model: string, hashes: readonly string[]): Promise<Map<string, Float32Array>>;
  put(model: string, vectors: ReadonlyMap<string, Float32Array>): Promise<void>;
}

/** Texts to vectors: an OpenAI-compatible `POST <url>/embeddings`. */
export interface Embedder {
  embed(
    inputs: readonly string[],
    options: { timeoutMs: number; retries: number },
  ): Promise<Float32Array[]>;
}

const finite = z.number().refine(Number.isFinite, { message: "expected a finite number" });
const embeddingsAnswer = z.object({
  data: z
    .array(
      z.object({ index: z.number().int().min(0).optional(), embedding: z.array(finite).min(1) }),
    )
    .min(1),
});

/** The provider's answer could not be used. */
export class EmbeddingError extends Error {
  override name = "EmbeddingError";
}

/**
 * An OpenAI-compatible embeddings endpoint over the guarded outbound client: batches of at
 * most MAX_BATCH inputs, the answer checked (one vector per input, in order, every number
 * finite, every vector as long as the others and as `dimensions` when set).
 */
export function openAiEmbedder(deps: {
  config: EmbeddingsConfig;
  http: HttpClient;
  secret: SecretSource;
}): Embedder {
  const { config, http, secret } = deps;
  const url = `${config.url.replace(/\/+$/, "")}/embeddings`;
  return {
    async embed(inputs, options) {
      if (inputs.length === 0) return [];
      if (inputs.length > MAX_BATCH) {
        throw new EmbeddingError(`at most ${MAX_BATCH} inputs per request`);
      }
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/json",
      };
      if (config.apiKey) {
        const key = secret(config.apiKey);
        if (!key) throw new EmbeddingError(`the secret ${config.apiKey} is not set`);
        headers.authorization = `Bearer ${key}`;
      }
      const response = await http.request(url, {
        method: "POST",
        headers,
        body: JSON.stringify({
          model: config.model,
          input: inputs.map((input) => input.slice(0, MAX_INPUT_CHARS)),
          ...(config.dimensions !== undefined ? { dimensions: config.dimensions } : {}),
        }),
        timeoutMs: options.timeoutMs,
        retries: options.retries,
        // Floats as JSON text: ~20 bytes each, and some slack for the envelope.
        maxBytes: 64 * 1024 + inputs.length * (config.dimensions ?? 4096) * 24,
        followRedirects: false,
      });
      if (response.status < 200 || response.status >= 300) {
        throw new EmbeddingError(`the embeddings endpoint answered ${response.status}`);
      }
      let body: unknown;
      try {
        body = response.json();
      } catch {
        throw new EmbeddingError("the embeddings endpoint answered with something other than JSON");
      }
      const parsed = embeddingsAnswer.safeParse(body);
      if (!parsed.success) {
        throw new EmbeddingError("the embeddings endpoint's answer is not a list of embeddings");
      }
      const data = parsed.data.data;
      if (data.length !== inputs.length) {
        throw new EmbeddingError(
          `the embeddings endpoint answered ${data.length} vectors for ${inputs.length} inputs`,
        );
      }
      const ordered = data.every((item) => item.index !== undefined)
        ? [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
        : data;
      if (ordered.some((item, position) => item.index !== undefined && item.index !== position)) {
        throw new EmbeddingError(
          "the embeddings endpoint's answer does not index every input once",
        );
      }
      const length = config.dimensions ?? ordered[0]?.embedding.length;
      if (ordered.some((item) => item.embedding.length !== length)) {
        throw new EmbeddingError("the embeddings endpoint's vectors differ in length");
      }
      return ordered.map((item) => Float32Array.from(item.embedding));
    },
  };
}

/** What a tool's vector embeds: what it is and when to use it. */
export function toolText(tool: Pick<ToolSpec, "title" | "description" | "usageHint">): string {
  return `${tool.title}\n${tool.description}\n${tool.usageHint}`.slice(0, MAX_INPUT_CHARS);
}

/** The key of a text's vector beside the model: a hash of the text (and of the dimensions asked). */
export function textHash(text: string, dimensions: number | undefined): string {
  return sha256Hex(JSON.stringify([dimensions ?? null, text]));
}

export interface RankRequest {
  query: string;
  /** The version of `tools`: the same version, the same vectors. */
  version: string;
  /** The tools the caller may see (the lexical index's). */
  tools: readonly ToolSpec[];
  limit: number;
  /** Among them, those a result may be (allow / deny): no other tool is scored. */
  allowed: (id: string) => boolean;
  /** The lexical ranking, best first, at most `limit` hits among the allowed. */
  lexical: (limit: number) => SearchHit[];
}

/**
 * Hybrid ranking: the lexical ranking fused (reciprocal rank fusion, k = 60) with a ranking by
 * cosine similarity between the query's vector and the vectors of the tools the caller may
 * use, that one weighted by `weight`. Tool vectors are computed once per text and model (kept
 * in the store, and in this process by text and by catalog version); query vectors are kept
 * in this process. When the provider fails, the search is ranked by words alone.
 */
export class SemanticRanking {
  private readonly byVersion = new Map<string, Promise<Map<string, Float32Array>>>();
  private readonly byHash = new Map<string, Float32Array>();
  private readonly queries = new Map<string, Promise<Float32Array>>();
  private warned = false;
  private pausedUntil = 0;

  constructor(
    private readonly deps: {
      embedder: Embedder;
      store: VectorStore;
      model: string;
      dimensions?: number | undefined;
      weight: number;
      log?: Logger | undefined;
      now?: () => number;
    },
  ) {}

  async rank(request: RankRequest): Promise<SearchHit[]> {
    const lexical = request.lexical(Math.max(request.limit, request.tools.length));
    const now = this.deps.now?.() ?? Date.now();
    if (now < this.pausedUntil) return lexical.slice(0, request.limit);
    let semantic: string[];
    try {
      const [vectors, query] = await Promise.all([
        this.vectorsOf(request.version, request.tools),
        this.queryVector(request.query),
      ]);
      semantic = nearest(query, request.tools, vectors, request.allowed, {
        depth: Math.max(SEMANTIC_DEPTH, request.limit),
      });
      this.warned = false;
    } catch (error) {
      this.failed(error, now);
      return lexical.slice(0, request.limit);
    }
    return fuse(lexical, semantic, this.deps.weight, request.limit);
  }

  private failed(error: unknown, now: number): void {
    const silent =
      error instanceof OutboundError && (error.kind === "timeout" || error.kind === "network");
    if (silent) this.pausedUntil = now + PAUSE_AFTER_SILENCE_MS;
    if (this.warned) return;
    this.warned = true;
    this.deps.log?.warn("search: the embeddings provider failed; ranking by words alone", {
      model: this.deps.model,
      error: error instanceof Error ? error.message : String(error),
      ...(silent ? { pausedForMs: PAUSE_AFTER_SILENCE_MS } : {}),
    });
  }

  /** The query's vector, kept by model and text (a failed one is not kept). */
  private queryVector(query: string): Promise<Float32Array> {
    const key = `${this.deps.model}\n${this.deps.dimensions ?? ""}\n${query}`;
    const kept = this.queries.get(key);
    if (kept) {
      this.queries.delete(key);
      this.queries.set(key, kept);
      return kept;
    }
    const asked = this.deps.embedder
      .embed([query.slice(0, MAX_INPUT_CHARS)], { timeoutMs: QUERY_TIMEOUT_MS, retries: 0 })
      .then(([vector]) => {
        if (!vector) throw new EmbeddingError("no vector for the query");
        return unit(vector);
      });
    asked.catch(() => this.queries.delete(key));
    this.queries.set(key, asked);
    trim(this.queries, KEPT_QUERIES);
    return asked;
  }

  /** The tools' vectors by id, for one catalog version (a failed computation is not kept). */
  private vectorsOf(version: string, tools: readonly ToolSpec[]) {
    const kept = this.byVersion.get(version);
    if (kept) {
      this.byVersion.delete(version);
      this.byVersion.set(version, kept);
      return kept;
    }
    const computing = this.compute(tools);
    computing.catch(() => this.byVersion.delete(version));
    this.byVersion.set(version, computing);
    trim(this.byVersion, KEPT_VERSIONS);
    return computing;
  }

  private async compute(tools: readonly ToolSpec[]): Promise<Map<string, Float32Array>> {
    const { model, dimensions } = this.deps;
    const texts = new Map<string, string>();
    const hashOf = new Map<string, string>();
    for (const tool of tools) {
      const text = toolText(tool);
      const hash = textHash(text, dimensions);
      hashOf.set(tool.id, hash);
      texts.set(hash, text);
    }
    const missing = () => [...texts.keys()].filter((hash) => !this.byHash.has(hash));
    let wanted = missing();
    if (wanted.length > 0) {
      try {
        const stored = await this.deps.store.get(model, wanted);
        for (const [hash, vector] of stored) this.keep(hash, vector);
      } catch (error) {
        // The store unavailable is no reason not to rank: the provider is asked instead.
        this.deps.log?.warn("search: stored tool vectors could not be read", {
          error: error instanceof Error ? error.message : String(error),
        });
      }
      wanted = missing();
    }
    if (wanted.length > 0) {
      const made = new Map<string, Float32Array>();
      const batches: string[][] = [];
      for (let at = 0; at < wanted.length; at += MAX_BATCH) {
        batches.push(wanted.slice(at, at + MAX_BATCH));
      }
      let next = 0;
      const worker = async () => {
        while (next < batches.length) {
          const batch = batches[next++] ?? [];
          const vectors = await this.deps.embedder.embed(
            batch.map((hash) => texts.get(hash) ?? ""),
            { timeoutMs: BATCH_TIMEOUT_MS, retries: 1 },
          );
          // Kept as each batch arrives: a later batch failing does not lose this one's.
          batch.forEach((hash, i) => {
            const vector = vectors[i];
            if (!vector) return;
            made.set(hash, vector);
            this.keep(hash, vector);
          });
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL_BATCHES, batches.length) }, worker));
      try {
        await this.deps.store.put(model, made);
      } catch (error) {
        this.deps.log?.warn("search: tool vectors could not be stored", {
          error: error instanceof Error ? error.message : String(error),
        });
      }
    }
    const byTool = new Map<string, Float32Array>();
    for (const [id, hash] of hashOf) {
      const vector = this.byHash.get(hash);
      if (vector) byTool.set(id, vector);
    }
    return byTool;
  }

  /** Kept as a unit vector, so a comparison is a dot product. */
  private keep(hash: string, vector: Float32Array): void {
    this.byHash.delete(hash);
    this.byHash.set(hash, unit(vector));
    trim(this.byHash, KEPT_VECTORS);
  }
}

/**
 * The tools allowed, by cosine similarity to the query, best first: only those above 0. The
 * vectors are unit vectors (SemanticRanking keeps them so), so the similarity is their dot
 * product.
 */
export function nearest(
  query: Float32Array,
  tools: readonly ToolSpec[],
  vectors: ReadonlyMap<string, Float32Array>,
  allowed: (id: string) => boolean,
  options: { depth: number },
): string[] {
  const scored: { id: string; similarity: number }[] = [];
  for (const tool of tools) {
    if (!allowed(tool.id)) continue;
    const vector = vectors.get(tool.id);
    if (!vector || vector.length !== query.length) continue;
    let similarity = 0;
    for (let i = 0; i < query.length; i++) similarity += (query[i] ?? 0) * (vector[i] ?? 0);
    if (similarity > 0) scored.push({ id: tool.id, similarity });
  }
  scored.sort((a, b) => b.similarity - a.similarity || (a.id < b.id ? -1 : 1));
  return scored.slice(0, options.depth).map((entry) => entry.id);
}

/**
 * Reciprocal rank fusion: each tool scores 1 / (k + its lexical rank) plus weight / (k + its
 * semantic rank), ranks from 1, a ranking a tool is absent from adding nothing. Ties keep the
 * lexical order. A tool only the semantic ranking found matched no field.
 */
export function fuse(
  lexical: readonly SearchHit[],
  semantic: readonly string[],
  weight: number,
  limit: number,
): SearchHit[] {
  const scores = new Map<string, { hit: SearchHit; score: number; order: number }>();
  lexical.forEach((hit, rank) => {
    scores.set(hit.id, { hit, score: 1 / (RRF_K + rank + 1), order: rank });
  });
  semantic.forEach((id, rank) => {
    const add = weight / (RRF_K + rank + 1);
    const kept = scores.get(id);
    if (kept) kept.score += add;
    else
      scores.set(id, {
        hit: { id, score: 0, matched: [] },
        score: add,
        order: lexical.length + rank,
      });
  });
  return [...scores.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, limit)
    .map(({ hit, score }) => ({ ...hit, score: Math.round(score * 1e6) / 1e6 }));
}

function norm(vector: Float32Array): number {
  let sum = 0;
  for (const value of vector) sum += value * value;
  return Math.sqrt(sum);
}

/** The vector scaled to length 1 (a zero vector stays zero). */
function unit(vector: Float32Array): Float32Array {
  const length = norm(vector);
  return length === 0 ? vector : vector.map((value) => value / length);
}

/** Drops the least recently used entries past `size`. */
function trim<K, V>(map: Map<K, V>, size: number): void {
  for (const key of map.keys()) {
    if (map.size <= size) break;
    map.delete(key);
  }
}

/** The hybrid ranking of a stage's `search.embeddings`. */
export function semanticRanking(deps: {
  config: EmbeddingsConfig;
  http: HttpClient;
  secret: SecretSource;
  store: VectorStore;
  log?: Logger | undefined;
}): SemanticRanking {
  return new SemanticRanking({
    embedder: openAiEmbedder(deps),
    store: deps.store,
    model: deps.config.model,
    dimensions: deps.config.dimensions,
    weight: deps.config.weight,
    log: deps.log,
  });
}
