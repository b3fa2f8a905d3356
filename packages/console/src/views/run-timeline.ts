/**
 * A run's timeline: every call with its events in order (approval asked, scheduled, progress,
 * result), durations, cache and fallback marks, budget left, failures with their kind and
 * recovery, and what the person may do to each call. Events are added as they arrive; a call's
 * parts are rebuilt only when they change, and the focus stays where the person left it. News
 * that arrives live is announced politely.
 */
import type { Api } from "../api";
import { h, json, notice, time } from "../dom";
import type { Me } from "../view";
import { busy, duration, errorNotice, scrollable } from "../widgets";
import {
  actionButton,
  type CallView,
  cancel,
  cancelledText,
  decisionControls,
  getCall,
  mayCancel,
} from "./run-actions";
import {
  between,
  type CallState,
  foldCall,
  idsOf,
  PHASE_LABEL,
  phaseOf,
  progressOf,
  type Result,
  type RunEvent,
  resultOf,
} from "./run-model";

/** Progress steps listed per call; earlier ones are counted, not listed. */
const PROGRESS_SHOWN = 8;
/** A call's progress is announced at most this often. */
const PROGRESS_ANNOUNCE_MS = 5_000;
/** Output shown before "Show all". */
const OUTPUT_PREVIEW = 2_000;

export interface TimelineOptions {
  api: Api;
  me: Me;
  runId: string;
  signal: AbortSignal;
  /** A call began, waits or finished (live): the run's budget and counts changed. */
  onChange?: () => void;
}

interface CallEntry {
  events: RunEvent[];
  state: CallState;
  item: HTMLLIElement;
  head: HTMLElement;
  badge: HTMLElement;
  facts: HTMLElement;
  note: HTMLElement;
  actions: HTMLElement;
  actionsFor: string;
  input: HTMLElement;
  list: HTMLOListElement;
  /** Which of its disclosure widgets the person opened. */
  open: Set<string>;
  reason?: HTMLInputElement;
  /** The call as the API shows it, fetched once its approval was decided. */
  decision?: NonNullable<CallView["approval"]>["decision"];
  decisionAsked?: boolean;
  lastProgressAnnounced?: number;
}

export interface Timeline {
  element: HTMLElement;
  /** Adds events; `live` ones are announced. Repeated events (same key) are ignored. */
  add(events: readonly RunEvent[], live: boolean): void;
  /** How many calls it shows. */
  readonly size: number;
}

export function createTimeline(options: TimelineOptions): Timeline {
  const { api, me, runId } = options;
  const seen = new Set<string>();
  const calls = new Map<string, CallEntry>();
  const dirty = new Set<string>();
  const news: string[] = [];
  let flushing = false;
  let counter = 0;
  /** When the latest-beginning call began. */
  let latestStart = "";

  const list = h("ol", { class: "calls" });
  const empty = h(
    "p",
    { class: "hint" },
    "No calls in this run yet. They appear here as they are made.",
  );
  const announcer = h("div", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  const element = h("div", { class: "timeline" }, empty, list, announcer);

  const entryFor = (callId: string, first: RunEvent): CallEntry => {
    const known = calls.get(callId);
    if (known) return known;
    counter += 1;
    const id = `call-${counter}`;
    const head = h("h3", { id: `${id}-title`, tabindex: "-1" });
    const badge = h("span", { class: "badge" });
    const facts = h("div", { class: "call-facts" });
    const note = h("div", { class: "call-note" });
    const actions = h("div", { class: "call-actions" });
    const input = h("div", { class: "call-input" });
    const events = h("ol", { class: "call-events", "aria-label": `Events of call ${callId}` });
    const item = h(
      "li",
      { class: "call" },
      h(
        "article",
        { "aria-labelledby": `${id}-title`, id },
        h("header", { class: "call-head" }, head, badge),
        facts,
        note,
        actions,
        input,
        events,
      ),
    );
    const entry: CallEntry = {
      events: [],
      state: foldCall(callId, [first]),
      item,
      head,
      badge,
      facts,
      note,
      actions,
      actionsFor: "",
      input,
      list: events,
      open: new Set(),
    };
    // In the order the calls began: almost always after the last one, which is quick.
    const before =
      entry.state.firstAt >= latestStart
        ? undefined
        : [...calls.values()].find((other) => other.state.firstAt > entry.state.firstAt);
    calls.set(callId, entry);
    if (entry.state.firstAt > latestStart) latestStart = entry.state.firstAt;
    list.insertBefore(item, before?.item ?? null);
    empty.remove();
    return entry;
  };

  const add = (events: readonly RunEvent[], live: boolean) => {
    let changed = false;
    for (const event of events) {
      if (seen.has(event.eventKey)) continue;
      seen.add(event.eventKey);
      const { runId: eventRun, callId } = idsOf(event);
      if (!callId || (eventRun && eventRun !== runId)) continue;
      const entry = entryFor(callId, event);
      entry.events.push(event);
      dirty.add(callId);
      if (live) {
        const said = newsOf(entry, event);
        if (said) news.push(said);
        if (event.detailType !== "ToolCallProgress") changed = true;
      }
    }
    if (changed) options.onChange?.();
    if (!flushing && dirty.size > 0) {
      flushing = true;
      queueMicrotask(flush);
    }
  };

  const flush = () => {
    flushing = false;
    for (const callId of dirty) {
      const entry = calls.get(callId);
      if (entry) render(entry);
    }
    dirty.clear();
    if (news.length > 0) {
      // Only the latest few: a burst is summed up, not read out one by one.
      announcer.textContent = news.slice(-3).join(" ");
      news.length = 0;
    }
  };

  const newsOf = (entry: CallEntry, event: RunEvent): string | undefined => {
    const name = `${String(event.detail.toolId ?? entry.state.toolId)} call ${entry.state.callId}`;
    switch (event.detailType) {
      case "ToolCallApprovalRequested":
        return `${name} awaits approval.`;
      case "ToolCallScheduled":
        return `${name} scheduled.`;
      case "ToolCallProgress": {
        const now = Date.now();
        if (now - (entry.lastProgressAnnounced ?? 0) < PROGRESS_ANNOUNCE_MS) return undefined;
        entry.lastProgressAnnounced = now;
        return `${name}: ${progressText(progressOf(event))}.`;
      }
      case "ToolResultReceived": {
        const result = resultOf(event.detail);
        if (result.failure) return `${name} failed: ${result.failure.kind}.`;
        return `${name} succeeded${result.durationMs !== undefined ? ` in ${duration(result.durationMs)}` : ""}.`;
      }
      default:
        return undefined;
    }
  };

  const render = (entry: CallEntry) => {
    const state = foldCall(entry.state.callId, entry.events);
    entry.state = state;
    const phase = phaseOf(state);
    const focused = focusWithin(entry.item);

    entry.head.textContent = `${state.toolId || "call"} · ${state.callId}`;
    entry.badge.className = `badge phase-${phase}`;
    entry.badge.textContent = PHASE_LABEL[phase];
    entry.facts.replaceChildren(...callFacts(entry, state));

    const actionsFor = `${phase}|${state.requestedBy?.id ?? ""}`;
    if (actionsFor !== entry.actionsFor) {
      entry.actionsFor = actionsFor;
      entry.actions.replaceChildren(...actionsOf(entry, state));
      if (phase !== "running" && phase !== "awaiting_approval") {
        // A finished call's "asked to stop" note has been answered by its result.
        if (entry.note.querySelector(".notice.info")) entry.note.replaceChildren();
      }
    }
    if (state.hasInput && entry.input.childElementCount === 0) {
      entry.input.replaceChildren(
        disclosure(
          entry,
          "input",
          "Input",
          scrollable(json(state.input), `Input of call ${state.callId}`),
        ),
      );
    }
    entry.list.replaceChildren(...eventItems(entry, state));
    if (state.approval && state.scheduledAt !== undefined) askDecision(entry);
    if (state.approval && state.result && !state.scheduledAt) askDecision(entry);

    if (focused && !entry.item.contains(document.activeElement)) {
      const again = focused.key
        ? entry.item.querySelector<HTMLElement>(`[data-key="${focused.key}"]`)
        : null;
      (again ?? entry.head).focus({ preventScroll: true });
    }
  };

  /** Who decided on a call's approval is on the call, not in its events: asked once. */
  const askDecision = (entry: CallEntry) => {
    if (entry.decisionAsked) return;
    entry.decisionAsked = true;
    getCall(api, runId, entry.state.callId, options.signal)
      .then((call) => {
        if (!call.approval?.decision) return;
        entry.decision = call.approval.decision;
        dirty.add(entry.state.callId);
        if (!flushing) {
          flushing = true;
          queueMicrotask(flush);
        }
      })
      .catch(() => undefined);
  };

  const actionsOf = (entry: CallEntry, state: CallState): Node[] => {
    const phase = phaseOf(state);
    const out: Node[] = [];
    const context = `call ${state.callId} (${state.toolId})`;
    if (phase === "awaiting_approval" && me.permissions.includes("approve")) {
      entry.reason ??= h("input", {
        name: "reason",
        type: "text",
        maxlength: 1000,
        autocomplete: "off",
        "data-key": "reason",
      });
      out.push(
        decisionControls({
          api,
          runId,
          callId: state.callId,
          toolId: state.toolId,
          idPrefix: entry.item.querySelector("article")?.id ?? state.callId,
          note: entry.note,
          reason: entry.reason,
        }),
      );
    }
    if (
      (phase === "running" || phase === "awaiting_approval") &&
      mayCancel(me, state.requestedBy?.id)
    ) {
      const button = actionButton("Cancel", context, {
        key: "cancel",
        kind: "danger",
        onclick: () =>
          busy([button], async () => {
            entry.note.replaceChildren();
            try {
              const call = await cancel(api, runId, state.callId);
              entry.note.replaceChildren(notice("info", cancelledText(call)));
            } catch (error) {
              entry.note.replaceChildren(errorNotice(error, { what: "Could not cancel" }));
            }
          }),
      });
      out.push(h("div", { class: "call-cancel" }, button));
    }
    return out;
  };

  return {
    element,
    add,
    get size() {
      return calls.size;
    },
  };
}

/** The focused element inside `root`, and its key to find its successor after a rebuild. */
function focusWithin(root: HTMLElement): { key: string | undefined } | undefined {
  const active = document.activeElement;
  if (!(active instanceof HTMLElement) || !root.contains(active)) return undefined;
  return { key: active.dataset.key };
}

/** A <details> whose open state survives rebuilds. */
function disclosure(
  entry: CallEntry,
  key: string,
  summary: string,
  ...content: Node[]
): HTMLElement {
  const details = h(
    "details",
    {
      class: "disclosure",
      ...(entry.open.has(key) ? { open: true } : {}),
      ontoggle: (event: Event) => {
        const target = event.currentTarget as HTMLDetailsElement;
        if (target.open) entry.open.add(key);
        else entry.open.delete(key);
      },
    },
    h("summary", { "data-key": `summary-${key}` }, summary),
    ...content,
  );
  return details;
}

function callFacts(entry: CallEntry, state: CallState): Node[] {
  const phase = phaseOf(state);
  const parts: (Node | string)[] = [];
  const item = (label: string, ...value: (Node | string)[]) =>
    h("span", { class: "fact" }, h("span", { class: "fact-label" }, `${label} `), ...value);
  if (state.requestedBy) {
    parts.push(item("By", `${state.requestedBy.id} (${state.requestedBy.role})`));
  }
  if (state.toolset) parts.push(item("Toolset", state.toolset));
  if (state.mode) parts.push(item("Mode", state.mode));
  if (state.parentCallId) parts.push(item("Inside call", state.parentCallId));
  parts.push(item("Began", time(state.firstAt, "clock")));
  const result = state.result;
  if (result) {
    if (result.durationMs !== undefined && !neverRan(state)) {
      parts.push(item("Ran", duration(result.durationMs)));
    }
    const total = between(state.firstAt, result.completedAt);
    if (total !== undefined && state.approval) parts.push(item("In all", duration(total)));
  }
  if (entry.decision) {
    const { decision } = entry;
    parts.push(
      item(
        decision.approved ? "Approved by" : "Denied by",
        decision.by ? `${decision.by.id} (${decision.by.role})` : "the stage",
        decision.reason ? `: ${decision.reason}` : "",
      ),
    );
  }
  const marks = result ? resultMarks(result) : [];
  const progress =
    phase === "running" && state.progress ? progressMeter(state.callId, state.progress) : [];
  return [
    h("p", { class: "call-line" }, ...parts),
    ...(marks.length > 0 ? [h("p", { class: "call-marks" }, ...marks)] : []),
    ...progress,
  ];
}

/** A call a person denied, or nobody approved in time: its tool never ran. */
function neverRan(state: CallState): boolean {
  const kind = state.result?.failure?.kind;
  return kind === "denied" || kind === "approval_expired";
}

function progressMeter(callId: string, progress: CallState["progress"] & object): Node[] {
  const known = progress.total !== undefined && progress.total > 0;
  return [
    h(
      "p",
      { class: "call-progress" },
      known
        ? h("progress", {
            max: progress.total ?? 1,
            value: Math.min(progress.progress, progress.total ?? progress.progress),
            "aria-label": `Progress of call ${callId}`,
          })
        : null,
      h("span", {}, progressText(progress)),
    ),
  ];
}

export function progressText(progress: { progress: number; total?: number; message?: string }) {
  const amount =
    progress.total !== undefined && progress.total > 0
      ? `${formatNumber(progress.progress)} of ${formatNumber(progress.total)} (${Math.min(100, Math.round((progress.progress / progress.total) * 100))}%)`
      : formatNumber(progress.progress);
  return progress.message ? `${amount}: ${progress.message}` : amount;
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Cache, staleness, fallback, truncation: badges. */
function resultMarks(result: Result): HTMLElement[] {
  const marks: HTMLElement[] = [];
  if (result.cached) marks.push(h("span", { class: "badge mark" }, "cached"));
  if (result.stale) marks.push(h("span", { class: "badge warn" }, "stale"));
  if (result.fallback) {
    marks.push(
      h(
        "span",
        { class: "badge warn", title: result.fallback.reason },
        `fallback ${result.fallback.from} → ${result.fallback.to}`,
      ),
    );
  }
  if (result.truncated) marks.push(h("span", { class: "badge warn" }, "truncated"));
  if (result.resultOmitted) marks.push(h("span", { class: "badge mark" }, "result on the call"));
  return marks;
}

function eventItems(entry: CallEntry, state: CallState): HTMLElement[] {
  const progressSteps = state.events.filter((event) => event.detailType === "ToolCallProgress");
  const hidden = Math.max(0, progressSteps.length - PROGRESS_SHOWN);
  let skipped = 0;
  const items: HTMLElement[] = [];
  for (const event of state.events) {
    if (event.detailType === "ToolCallProgress" && skipped < hidden) {
      skipped += 1;
      if (skipped === hidden) {
        items.push(
          h(
            "li",
            { class: "event event-skipped" },
            `${hidden} earlier progress step${hidden === 1 ? "" : "s"} not listed.`,
          ),
        );
      }
      continue;
    }
    items.push(eventItem(entry, state, event));
  }
  return items;
}

function eventItem(entry: CallEntry, state: CallState, event: RunEvent): HTMLElement {
  const since = between(state.firstAt, event.occurredAt);
  const when = h(
    "span",
    { class: "event-time" },
    time(event.occurredAt, "clock"),
    since !== undefined && since > 0 ? h("span", { class: "offset" }, ` +${duration(since)}`) : "",
  );
  const { detail } = event;
  switch (event.detailType) {
    case "ToolCallApprovalRequested": {
      const approval = detail.approval as { expiresAt?: string } | undefined;
      return row(
        "approval",
        when,
        "Approval requested",
        approval?.expiresAt ? ["Waits until ", time(approval.expiresAt, "clock"), "."] : [],
      );
    }
    case "ToolCallScheduled": {
      const access = detail.fallbackAccess as
        | { tool?: string; allowed?: boolean; reasons?: string[] }
        | undefined;
      return row("scheduled", when, "Scheduled", [
        neverRan(state) ? "Closed without running. " : state.approval ? "After approval. " : "",
        typeof detail.implementation === "string" ? `${detail.implementation} tool. ` : "",
        access?.tool
          ? access.allowed
            ? `Fallback ${access.tool} may answer. `
            : `Fallback ${access.tool} may not answer${access.reasons?.length ? ` (${access.reasons.join(", ")})` : ""}. `
          : "",
      ]);
    }
    case "ToolCallProgress":
      return row("progress", when, "Progress", [progressText(progressOf(event))]);
    case "ToolResultReceived": {
      const result = resultOf(detail);
      const failure = result.failure;
      const label = failure
        ? failure.kind === "cancelled"
          ? "Cancelled"
          : `Failed: ${failure.kind}`
        : "Succeeded";
      const body: (Node | string)[] = [];
      if (result.durationMs !== undefined && !neverRan(state)) {
        body.push(`Ran ${duration(result.durationMs)}. `);
      }
      if (failure) {
        body.push(h("span", { class: "failure-message" }, failure.message), " ");
        body.push(
          h(
            "span",
            { class: "failure-advice" },
            `Recovery: ${failure.recovery ?? "—"}; ${failure.retryable ? "retryable" : "not retryable"}`,
            failure.retryAfterMs !== undefined ? ` after ${duration(failure.retryAfterMs)}` : "",
            ".",
          ),
        );
        if (failure.connection?.provider) {
          body.push(
            ` Needs a connection to ${failure.connection.provider}${failure.connection.reason ? ` (${failure.connection.reason.replace("_", " ")})` : ""}.`,
          );
        }
      }
      if (result.budget) body.push(" ", budgetText(result.budget));
      const output = result.output ?? "";
      const outputBlock =
        output && !failure
          ? disclosure(
              entry,
              "output",
              result.resultOmitted ? "Output (a preview)" : "Output",
              ...outputNodes(state.callId, output),
            )
          : null;
      return row(failure ? "failed" : "succeeded", when, label, body, outputBlock);
    }
    default:
      return row("other", when, event.detailType, []);
  }
}

function outputNodes(callId: string, output: string): Node[] {
  const label = `Output of call ${callId}`;
  if (output.length <= OUTPUT_PREVIEW) {
    return [scrollable(h("pre", { class: "output" }, output), label)];
  }
  const pre = scrollable(
    h("pre", { class: "output" }, `${output.slice(0, OUTPUT_PREVIEW)}…`),
    label,
  );
  const more = h(
    "button",
    {
      type: "button",
      class: "quiet",
      onclick: () => {
        pre.textContent = output;
        more.remove();
      },
    },
    `Show all ${output.length} characters`,
  );
  return [pre, more];
}

function budgetText(budget: { calls?: number; cost?: number; seconds?: number }): string {
  const left: string[] = [];
  if (budget.calls !== undefined) left.push(`${budget.calls} calls`);
  if (budget.cost !== undefined) left.push(`${budget.cost} cost`);
  if (budget.seconds !== undefined) left.push(duration(budget.seconds * 1000));
  return left.length > 0 ? `Run has left: ${left.join(", ")}.` : "";
}

function row(
  kind: string,
  when: HTMLElement,
  label: string,
  body: (Node | string)[],
  extra?: HTMLElement | null,
): HTMLElement {
  return h(
    "li",
    { class: `event event-${kind}` },
    when,
    " ",
    h("strong", { class: "event-label" }, label),
    body.length > 0 ? h("span", { class: "event-body" }, " ", ...body) : null,
    extra ?? null,
  );
}
