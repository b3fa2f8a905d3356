import type { approvalsView as approvalsSchema, runEventPageView } from "@toolbus/wire/schemas";
import type { z } from "zod";
/**
 * `#/approvals`: calls waiting for a person's decision across runs (`GET /v1/approvals`), the
 * soonest to expire first, each with its tool, input, who asked and until when, and Approve /
 * Deny. The input is not on the call's view: it is read from the run's approval event.
 */
import type { Api } from "../api";
import { h, heading, json, notice, time } from "../dom";
import { href, segment, type View } from "../view";
import { scrollable } from "../widgets";
import { type CallView, decisionControls } from "./run-actions";
import { idsOf } from "./run-model";

/** Pages of one run's log read to find its approval events, and runs read at once. */
const PAGES_PER_RUN = 3;
const PARALLEL = 4;
/** Calls listed at once (the API's most). */
const LIMIT = 50;

export const approvalsView: View = async (context) => {
  const { api, signal } = context;
  const { calls } = await api.get<z.infer<typeof approvalsSchema>>("/v1/approvals", {
    signal,
    query: { limit: LIMIT },
  });
  const inputs = await inputsOf(api, calls, signal);
  const list = h("ul", { class: "approvals" });
  const left = h("p", { class: "hint" });
  const done = h("div", { class: "decided" });
  const count = () => {
    const n = list.childElementCount;
    left.textContent =
      n === 0
        ? "Nothing waits for a decision."
        : calls.length >= LIMIT
          ? `The ${n} soonest to expire of the calls that wait for a decision; decide on these to see more.`
          : `${n} call${n === 1 ? "" : "s"} wait${n === 1 ? "s" : ""} for a decision.`;
  };
  calls.forEach((call, index) => {
    const note = h("div", { class: "call-note" });
    const id = `approval-${index + 1}`;
    const key = `${call.parentRunId}\n${call.callId}`;
    const item: HTMLLIElement = h(
      "li",
      { class: "approval" },
      h(
        "article",
        { "aria-labelledby": `${id}-title` },
        h("h2", { id: `${id}-title` }, `${call.toolId} · ${call.callId}`),
        h(
          "p",
          { class: "call-line" },
          h(
            "span",
            { class: "fact" },
            h("span", { class: "fact-label" }, "Run "),
            h("a", { href: href(`/runs/${segment(call.parentRunId)}`) }, call.parentRunId),
          ),
          h(
            "span",
            { class: "fact" },
            h("span", { class: "fact-label" }, "Asked by "),
            `${call.requestedBy.id} (${call.requestedBy.role})`,
          ),
          call.approval
            ? h(
                "span",
                { class: "fact" },
                h("span", { class: "fact-label" }, "Asked "),
                time(call.approval.requestedAt, "clock"),
              )
            : null,
          call.approval
            ? h(
                "span",
                { class: "fact" },
                h("span", { class: "fact-label" }, "Expires "),
                time(call.approval.expiresAt, "clock"),
              )
            : null,
        ),
        inputs.has(key)
          ? h(
              "div",
              { class: "approval-input" },
              h("h3", {}, "Input"),
              scrollable(json(inputs.get(key)), `Input of call ${call.callId}`),
            )
          : h(
              "p",
              { class: "hint" },
              "The input is in the run's events, which could not be read here.",
            ),
        note,
        decisionControls({
          api,
          runId: call.parentRunId,
          callId: call.callId,
          toolId: call.toolId,
          idPrefix: id,
          note,
          done: (_decided, verdict) => {
            // Decided: the item goes; what was decided stays said at the top of the list.
            done.replaceChildren(
              notice(
                "success",
                `${verdict === "approve" ? "Approved" : "Denied"} ${call.toolId} call ${call.callId}. `,
                h("a", { href: href(`/runs/${segment(call.parentRunId)}`) }, "Follow its run"),
              ),
            );
            item.remove();
            count();
            title().focus();
          },
        }),
      ),
    );
    list.appendChild(item);
  });
  const page = h(
    "section",
    { class: "approvals-page" },
    heading(
      "Approvals",
      "Calls the stage holds until a person approves them; the soonest to expire first.",
    ),
    done,
    left,
    list,
  );
  /** Where focus goes once the decided call's controls are gone. */
  const title = () => page.querySelector("h1") as HTMLElement;
  count();
  return page;
};

/** Each waiting call's input, from its run's ToolCallApprovalRequested event. */
async function inputsOf(
  api: Api,
  calls: readonly CallView[],
  signal: AbortSignal,
): Promise<Map<string, unknown>> {
  const wanted = new Map<string, Set<string>>();
  for (const call of calls) {
    const set = wanted.get(call.parentRunId) ?? new Set<string>();
    set.add(call.callId);
    wanted.set(call.parentRunId, set);
  }
  const found = new Map<string, unknown>();
  const runs = [...wanted.entries()];
  const worker = async () => {
    for (let next = runs.shift(); next; next = runs.shift()) {
      const [runId, callIds] = next;
      try {
        await readRun(api, runId, callIds, found, signal);
      } catch {
        // Its input stays unknown; the decision can still be made.
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return found;
}

async function readRun(
  api: Api,
  runId: string,
  callIds: Set<string>,
  found: Map<string, unknown>,
  signal: AbortSignal,
): Promise<void> {
  let cursor: string | undefined;
  const missing = new Set(callIds);
  for (let page = 0; page < PAGES_PER_RUN && missing.size > 0; page += 1) {
    const read = await api.get<z.infer<typeof runEventPageView>>(
      `/v1/runs/${encodeURIComponent(runId)}/events`,
      { signal, query: { limit: 1000, cursor } },
    );
    for (const event of read.events) {
      const { callId } = idsOf(event);
      if (event.detailType !== "ToolCallApprovalRequested" || !callId || !missing.has(callId)) {
        continue;
      }
      found.set(`${runId}\n${callId}`, event.detail.input);
      missing.delete(callId);
    }
    if (!read.cursor || read.cursor === cursor || read.events.length < 1000) return;
    cursor = read.cursor;
  }
}
