/**
 * `#/runs`: the stage's recent runs, gathered from its event stream (`GET /v1/events`; there is
 * no list of runs), and a form to open any run by its id.
 */
import type { stageEventPageView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { type Api, ApiError } from "../api";
import { h, heading, notice, table, time } from "../dom";
import { href, segment, type View } from "../view";
import { errorNotice } from "../widgets";
import { idsOf, type RunEvent } from "./run-model";
import { openRunForm } from "./run-open";
import { followEvents } from "./run-stream";

/** The windows a person may look back over. */
const WINDOWS = [
  { value: "1h", label: "Last hour", ms: 3_600_000 },
  { value: "24h", label: "Last 24 hours", ms: 86_400_000 },
  { value: "7d", label: "Last 7 days", ms: 7 * 86_400_000 },
] as const;
const DEFAULT_WINDOW = "24h";
/** Bounds on what one visit reads: pages, and events in all. */
const MAX_PAGES = 30;
const MAX_EVENTS = 20_000;
const PAGE = 1000;
/** The columns of the list of runs. */
const HEAD = ["Run", "First event", "Last event", "Calls", "Failed", "State", "Tools"] as const;
/** Runs listed, the latest first. */
const MAX_RUNS = 200;

const PATTERN = JSON.stringify({
  "detail-type": ["ToolCallScheduled", "ToolResultReceived", "ToolCallApprovalRequested"],
});

interface RunRow {
  runId: string;
  first: string;
  last: string;
  calls: Set<string>;
  finished: Set<string>;
  failed: Set<string>;
  waiting: Set<string>;
  tools: Set<string>;
}

export const runsView: View = async (context) => {
  const { api, signal, query } = context;
  const chosen =
    WINDOWS.find((window) => window.value === query.get("since")) ??
    WINDOWS.find((window) => window.value === DEFAULT_WINDOW) ??
    WINDOWS[1];
  const since = new Date(Date.now() - chosen.ms).toISOString();

  const listing = h("div", { class: "runs-listing" });
  const liveState = h("p", { class: "live-state" });
  const announcer = h("div", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  const span = chosen.label.toLowerCase();
  try {
    const read = await readRecent(api, since, signal);
    const { runs } = read;
    const show = () => {
      // A link the person is on keeps the focus across the rebuild.
      const active = document.activeElement;
      const focused =
        active instanceof HTMLAnchorElement && listing.contains(active)
          ? active.getAttribute("href")
          : null;
      listing.replaceChildren(runsTable(sorted(runs), span, read.bounded));
      if (focused) {
        for (const link of listing.querySelectorAll("a")) {
          if (link.getAttribute("href") === focused) link.focus({ preventScroll: true });
        }
      }
    };
    show();
    // The window read in full: runs that begin or go on from now are added as they do.
    if (!read.bounded) {
      let queued: ReturnType<typeof setTimeout> | undefined;
      const fresh: string[] = [];
      signal.addEventListener("abort", () => clearTimeout(queued), { once: true });
      void followEvents(api, "/v1/events", {
        signal,
        from: read.cursor,
        query: { pattern: PATTERN },
        news: "new runs and calls",
        onEvent: (event) => {
          const { runId } = idsOf(event);
          if (runId && !runs.has(runId)) fresh.push(runId);
          addTo(runs, event);
          clearTimeout(queued);
          queued = setTimeout(() => {
            show();
            if (fresh.length > 0) {
              announcer.textContent =
                fresh.length === 1
                  ? `New run: ${fresh[0]}.`
                  : `${fresh.length} new runs, the latest ${fresh.at(-1)}.`;
              fresh.length = 0;
            }
          }, 300);
        },
        onState: (kind, text) => {
          liveState.className = `live-state ${kind}`;
          liveState.textContent = text;
        },
      });
    }
  } catch (error) {
    if (signal.aborted) throw error;
    listing.replaceChildren(
      error instanceof ApiError && error.status === 403
        ? notice(
            "info",
            "Your role may not read the stage's events, so recent runs cannot be listed. Open a run by its id below.",
          )
        : error instanceof ApiError && error.status === 404
          ? notice(
              "info",
              "This stage does not offer its event stream, so recent runs cannot be listed. Open a run by its id below.",
            )
          : errorNotice(error, { what: "Could not read the stage's events" }),
    );
  }

  const select = h(
    "select",
    { id: "runs-since", name: "since" },
    ...WINDOWS.map((window) =>
      h(
        "option",
        { value: window.value, ...(window === chosen ? { selected: true } : {}) },
        window.label,
      ),
    ),
  );
  const windowForm = h(
    "form",
    {
      class: "runs-window",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const path = `/runs?since=${encodeURIComponent(select.value)}`;
        // The same window again reads the events again.
        if (location.hash === `#${path}`) context.refresh();
        else context.navigate(path);
      },
    },
    h("label", { for: "runs-since" }, "Runs with calls in"),
    select,
    h("button", { type: "submit" }, "Show"),
  );

  return h(
    "section",
    { class: "runs-page" },
    heading(
      "Runs",
      "Runs with calls recently, from the stage's events; open one to follow it live.",
    ),
    windowForm,
    liveState,
    listing,
    announcer,
    openRunForm(context),
  );
};

/** Reads the window's call events page by page, within bounds, and groups them by run. */
async function readRecent(
  api: Api,
  since: string,
  signal: AbortSignal,
): Promise<{ runs: Map<string, RunRow>; cursor: string | undefined; bounded: boolean }> {
  const runs = new Map<string, RunRow>();
  let cursor: string | undefined;
  let events = 0;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const read = await api.get<z.infer<typeof stageEventPageView>>("/v1/events", {
      signal,
      query: cursor
        ? { cursor, pattern: PATTERN, limit: PAGE }
        : { since, pattern: PATTERN, limit: PAGE },
    });
    for (const event of read.events) addTo(runs, event);
    events += read.events.length;
    if (!read.more || read.cursor === cursor) return { runs, cursor: read.cursor, bounded: false };
    cursor = read.cursor;
    if (events >= MAX_EVENTS) break;
  }
  return { runs, cursor, bounded: true };
}

function addTo(runs: Map<string, RunRow>, event: RunEvent): void {
  const { runId, callId } = idsOf(event);
  if (!runId || !callId) return;
  let run = runs.get(runId);
  if (!run) {
    run = {
      runId,
      first: event.occurredAt,
      last: event.occurredAt,
      calls: new Set(),
      finished: new Set(),
      failed: new Set(),
      waiting: new Set(),
      tools: new Set(),
    };
    runs.set(runId, run);
  }
  if (event.occurredAt < run.first) run.first = event.occurredAt;
  if (event.occurredAt > run.last) run.last = event.occurredAt;
  run.calls.add(callId);
  if (typeof event.detail.toolId === "string") run.tools.add(event.detail.toolId);
  if (event.detailType === "ToolCallApprovalRequested") run.waiting.add(callId);
  if (event.detailType === "ToolCallScheduled") run.waiting.delete(callId);
  if (event.detailType === "ToolResultReceived") {
    run.finished.add(callId);
    run.waiting.delete(callId);
    if (event.detail.status === "failed") run.failed.add(callId);
  }
}

function sorted(runs: Map<string, RunRow>): RunRow[] {
  return [...runs.values()].sort((a, b) => b.last.localeCompare(a.last));
}

function runsTable(runs: RunRow[], window: string, bounded: boolean): Node {
  if (runs.length === 0) {
    return notice("info", `No run made a call in the ${window}.`);
  }
  const shown = runs.slice(0, MAX_RUNS);
  const rows = shown.map((run) => {
    const open = [...run.calls].filter((call) => !run.finished.has(call)).length;
    const failed = run.failed.size;
    const cells: (Node | string | null)[][] = [
      [h("a", { href: href(`/runs/${segment(run.runId)}`) }, run.runId)],
      [time(run.first, "clock")],
      [time(run.last, "clock")],
      [String(run.calls.size)],
      [failed > 0 ? h("span", { class: "badge off" }, `${failed} failed`) : "0"],
      [
        run.waiting.size > 0
          ? h("span", { class: "badge warn" }, `${run.waiting.size} awaiting approval`)
          : null,
        open - run.waiting.size > 0
          ? h("span", { class: "badge phase-running" }, `${open - run.waiting.size} running`)
          : null,
        open === 0 ? "all finished" : null,
      ],
      [[...run.tools].sort().join(", ")],
    ];
    // Each cell names its column too: shown where a narrow screen stacks the row's cells.
    return cells.map((content, index) => [
      h("span", { class: "cell-label" }, `${HEAD[index]}: `),
      ...content,
    ]);
  });
  return h(
    "div",
    { class: "runs-list" },
    bounded
      ? notice(
          "info",
          "The window holds more events than one visit reads: the list shows the earliest runs in it. Choose a shorter window to see the latest.",
        )
      : null,
    runs.length > MAX_RUNS
      ? h("p", { class: "hint" }, `The ${MAX_RUNS} latest of ${runs.length} runs.`)
      : null,
    table("Recent runs", [...HEAD], rows),
  );
}
