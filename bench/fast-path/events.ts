import { setTimeout as sleep } from "node:timers/promises";

interface RunEvent {
  detailType: string;
  detail: { callId?: unknown; status?: unknown };
}

const PAGE = 1_000;

/** Every event of a run, from the start, following the cursor until a page comes back empty. */
async function readRun(api: string, key: string, runId: string): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  let cursor: string | null = null;
  for (;;) {
    const query = new URLSearchParams({ limit: String(PAGE), ...(cursor ? { cursor } : {}) });
    const response = await fetch(`${api}/v1/runs/${runId}/events?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await response.json()) as { events?: RunEvent[]; cursor?: string | null };
    if (response.status !== 200 || !Array.isArray(body.events)) {
      throw new Error(`GET events answered ${response.status}: ${JSON.stringify(body)}`);
    }
    events.push(...body.events);
    // The log hands back a cursor even on its last page, so an empty page is the end.
    if (body.events.length === 0 || !body.cursor || body.cursor === cursor) return events;
    cursor = body.cursor;
  }
}

export interface Accounting {
  /** Calls without a ToolCallScheduled or without a succeeded ToolResultReceived. */
  lost: number;
  /** Calls with more than one of either event. */
  duplicated: number;
  /** Events for call ids this run never made. */
  unexpected: number;
  events: number;
  waitedMs: number;
}

function account(events: RunEvent[], callIds: readonly string[]): Omit<Accounting, "waitedMs"> {
  const scheduled = new Map<string, number>();
  const succeeded = new Map<string, number>();
  const results = new Map<string, number>();
  const known = new Set(callIds);
  let unexpected = 0;
  const bump = (map: Map<string, number>, id: string) => map.set(id, (map.get(id) ?? 0) + 1);
  for (const event of events) {
    const id = String(event.detail.callId);
    if (!known.has(id)) unexpected++;
    if (event.detailType === "ToolCallScheduled") bump(scheduled, id);
    if (event.detailType === "ToolResultReceived") {
      bump(results, id);
      if (event.detail.status === "succeeded") bump(succeeded, id);
    }
  }
  let lost = 0;
  let duplicated = 0;
  for (const id of callIds) {
    if (!scheduled.get(id) || !succeeded.get(id)) lost++;
    if ((scheduled.get(id) ?? 0) > 1 || (results.get(id) ?? 0) > 1) duplicated++;
  }
  return { lost, duplicated, unexpected, events: events.length };
}

/**
 * The sync answer comes back when the result is stored; the recorder appends the events to
 * the run's log a little later (delivery is asynchronous). So the log is re-read from the
 * start until every call has both events, or until `waitMs` has passed: what is still
 * missing then counts as lost.
 */
export async function accountForCalls(
  api: string,
  key: string,
  runId: string,
  callIds: readonly string[],
  waitMs = 15_000,
): Promise<Accounting> {
  const started = Date.now();
  for (;;) {
    const counts = account(await readRun(api, key, runId), callIds);
    const waitedMs = Date.now() - started;
    if (counts.lost === 0) {
      // One more read a moment later, so a late redelivery shows up as a duplicate.
      await sleep(1_000);
      return { ...account(await readRun(api, key, runId), callIds), waitedMs };
    }
    if (waitedMs >= waitMs) return { ...counts, waitedMs };
    await sleep(500);
  }
}
