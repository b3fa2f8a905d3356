/**
 * `#/runs/<runId>`: a run's budget and limits, and its timeline, which follows the run's event
 * stream while the page is open (fetch streaming, so the bearer header goes with it) and
 * resumes from the last event id whenever the server ends a stream.
 */
import type { runEventPageView, runView as runSchema } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { type Api, ApiError } from "../api";
import { facts, h, heading, notice, table, time } from "../dom";
import { href, type View } from "../view";
import { duration, errorNotice } from "../widgets";
import { RUN_ID, type RunEvent } from "./run-model";
import { openRunForm } from "./run-open";
import { followEvents } from "./run-stream";
import { createTimeline } from "./run-timeline";

/** Events asked for per page of the backlog, and pages read before following live. */
const PAGE = 1000;
const BACKLOG_PAGES = 10;

type RunSummary = z.infer<typeof runSchema>;
type RunPolicy = RunSummary["policy"];

const LIMITS: [keyof RunPolicy, string, keyof RunSummary["remaining"] | undefined][] = [
  ["maxCalls", "Calls in all", "calls"],
  ["maxCallsPerTool", "Calls of one tool", undefined],
  ["maxSeconds", "Seconds from the first call", "seconds"],
  ["maxCost", "Cost units", "cost"],
  ["maxRepeats", "Same call repeated", undefined],
];

export const runView: View = async (context) => {
  const { api, signal } = context;
  const runId = context.params.runId ?? "";
  if (!RUN_ID.test(runId)) {
    return h(
      "section",
      {},
      heading("Run not found"),
      notice("error", "That is not a run id: 1-128 letters, digits, and . _ : - characters."),
      openRunForm(context),
    );
  }
  const base = `/v1/runs/${encodeURIComponent(runId)}`;

  const summaryBox = h("div", { class: "run-summary" });
  const showSummary = async () => {
    try {
      const summary = await api.get<RunSummary>(base, { signal });
      if (!signal.aborted) summaryBox.replaceChildren(...summaryNodes(summary));
    } catch (error) {
      if (signal.aborted) return;
      summaryBox.replaceChildren(
        error instanceof ApiError && error.status === 404
          ? notice("error", "This stage keeps no run budgets, so there is no summary to show.")
          : errorNotice(error, { what: "Could not read the run's budget" }),
      );
    }
  };

  let summaryTimer: ReturnType<typeof setTimeout> | undefined;
  const timeline = createTimeline({
    api,
    me: context.me,
    runId,
    signal,
    onChange: () => {
      // Events come in bursts: read the budget once the burst is over.
      clearTimeout(summaryTimer);
      summaryTimer = setTimeout(() => void showSummary(), 400);
    },
  });
  signal.addEventListener("abort", () => clearTimeout(summaryTimer), { once: true });

  // What happened before the page opened is not news, even when it arrives by the stream
  // (a backlog cut at BACKLOG_PAGES): the summary read now already counts it.
  const opened = Date.now();
  const [, backlog] = await Promise.all([showSummary(), readBacklog(api, base, signal)]);
  timeline.add(backlog.events, false);
  // Streamed events are added a burst at a time: one render, one summary read per burst.
  const pending: RunEvent[] = [];
  const flushPending = () => {
    const burst = pending.splice(0);
    const old = (event: RunEvent) => Date.parse(event.occurredAt) < opened;
    timeline.add(burst.filter(old), false);
    timeline.add(
      burst.filter((event) => !old(event)),
      true,
    );
  };

  const liveState = h("p", { class: "live-state" });
  const setLive = (kind: "live" | "waiting" | "stopped", text: string) => {
    liveState.className = `live-state ${kind}`;
    liveState.textContent = text;
  };
  setLive("waiting", "Connecting to the run's events…");
  void followEvents(api, `${base}/events`, {
    signal,
    from: backlog.cursor,
    onEvent: (event) => {
      pending.push(event);
      if (pending.length === 1) queueMicrotask(flushPending);
    },
    onState: setLive,
  });

  return h(
    "section",
    { class: "run-page" },
    heading(
      `Run ${runId}`,
      "What the run used and may still use, and each of its calls as it happens.",
    ),
    h("p", {}, h("a", { href: href("/runs") }, "All recent runs")),
    h("h2", {}, "Budget and limits"),
    summaryBox,
    h("h2", {}, "Timeline"),
    backlog.partial
      ? notice(
          "info",
          `This run has many events: the first ${backlog.events.length} were read at once, the rest follow.`,
        )
      : null,
    liveState,
    timeline.element,
  );
};

/** The run's events so far, a bounded number of pages; the cursor to follow on from. */
async function readBacklog(
  api: Api,
  base: string,
  signal: AbortSignal,
): Promise<{ events: RunEvent[]; cursor: string | undefined; partial: boolean }> {
  const events: RunEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < BACKLOG_PAGES; page += 1) {
    const read = await api.get<z.infer<typeof runEventPageView>>(`${base}/events`, {
      signal,
      query: { limit: PAGE, cursor },
    });
    events.push(...read.events);
    const next = read.cursor ?? undefined;
    // A page with fewer events than asked for is the log's end.
    if (read.events.length < PAGE || next === undefined || next === cursor) {
      return { events, cursor: next ?? cursor, partial: false };
    }
    cursor = next;
  }
  return { events, cursor, partial: true };
}

function summaryNodes(summary: RunSummary): Node[] {
  const byStatus = Object.entries(summary.calls)
    .filter(([, count]) => count > 0)
    .map(([status, count]) => `${count} ${status.replace("_", " ")}`)
    .join(", ");
  const used = facts([
    ["Calls made", String(summary.usage.calls)],
    ["Cost used", String(summary.usage.cost)],
    [
      "First call",
      summary.usage.firstCallAt ? time(summary.usage.firstCallAt, "clock") : "none yet",
    ],
    ["Calls by status", byStatus || "none"],
    [
      "Calls per tool",
      Object.entries(summary.usage.perTool)
        .map(([tool, count]) => `${tool} × ${count}`)
        .join(", "),
    ],
  ]);
  const limited = LIMITS.filter(
    ([limit]) =>
      summary.policy[limit] !== undefined ||
      summary.stagePolicy[limit] !== undefined ||
      summary.runPolicy?.[limit] !== undefined,
  );
  const limits =
    limited.length === 0
      ? h("p", { class: "hint" }, "No limits: neither the stage nor the run sets any.")
      : table(
          "The run's limits",
          ["Limit", "Applies", "Stage's", "Run's own", "Left"],
          limited.map(([limit, label, left]) => [
            label,
            show(summary.policy[limit]),
            show(summary.stagePolicy[limit]),
            show(summary.runPolicy?.[limit]),
            left && summary.remaining[left] !== undefined
              ? left === "seconds"
                ? duration((summary.remaining.seconds ?? 0) * 1000)
                : String(summary.remaining[left])
              : "—",
          ]),
        );
  return [used, limits];
}

const show = (value: number | undefined) => (value === undefined ? "—" : String(value));
