import { request as httpRequest } from "node:http";

/** Small HTTP helpers for tests that drive the API over real HTTP (serveApi). */

export interface RunEventView {
  eventKey: string;
  detailType: string;
  detail: { callId?: string; parentRunId?: string; status?: string } & Record<string, unknown>;
}

export interface HttpTarget {
  url: string;
  key: string;
}

/**
 * One request over node:http without keep-alive (a fresh loopback connection each time, so
 * no idle-socket reuse race between client and server), aborted after `timeoutMs` so a hang
 * fails the test clearly instead of stalling it.
 */
export function requestJson(
  target: HttpTarget,
  path: string,
  init: { method?: string; json?: unknown; timeoutMs?: number } = {},
): Promise<{ status: number; body: unknown }> {
  const payload = init.json === undefined ? undefined : JSON.stringify(init.json);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${target.url}${path}`,
      {
        method: init.method ?? "GET",
        agent: false,
        timeout: init.timeoutMs ?? 15_000,
        headers: {
          authorization: `Bearer ${target.key}`,
          ...(payload !== undefined
            ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text so an assertion shows it
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${init.method ?? "GET"} ${path}: timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** Every event of a run, following `cursor` page by page. */
export async function readRunEvents(
  target: HttpTarget,
  runId: string,
  pageSize = 100,
): Promise<RunEventView[]> {
  const all: RunEventView[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (cursor) query.set("cursor", cursor);
    const { status, body } = await requestJson(target, `/v1/runs/${runId}/events?${query}`);
    if (status !== 200) throw new Error(`events of ${runId}: ${status} ${JSON.stringify(body)}`);
    const { events, cursor: next } = body as { events: RunEventView[]; cursor: string | null };
    all.push(...events);
    if (!next || events.length === 0) return all;
    cursor = next;
  }
  throw new Error(`events of ${runId}: too many pages`);
}

/** Counts events per callId and detail type: `counts.get(callId)?.ToolCallScheduled`. */
export function countByCall(events: readonly RunEventView[]): Map<string, Record<string, number>> {
  const counts = new Map<string, Record<string, number>>();
  for (const event of events) {
    const callId = event.detail.callId;
    if (typeof callId !== "string") continue;
    const entry = counts.get(callId) ?? {};
    entry[event.detailType] = (entry[event.detailType] ?? 0) + 1;
    counts.set(callId, entry);
  }
  return counts;
}

/** Runs `task(i)` for i in [0, total) with `concurrency` workers. */
export async function inParallel(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await task(next++);
    }),
  );
}
