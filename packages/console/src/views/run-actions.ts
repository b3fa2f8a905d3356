/**
 * What a person may do to a call: approve or deny one that awaits approval (roles with the
 * `approve` permission), cancel one that has not finished (its caller or an administrator).
 * The API decides again; these only offer what the role may do and say how it went.
 */
import type { callView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import type { Api } from "../api";
import { h, notice } from "../dom";
import type { Me } from "../view";
import { busy, errorNotice } from "../widgets";

/** A call as the API shows it. */
export type CallView = z.infer<typeof callView>;

const callPath = (runId: string, callId: string) =>
  `/v1/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(callId)}`;

/** Whether this person may ask the call to stop (the API: its caller or an administrator). */
export function mayCancel(me: Me, requestedBy: string | undefined): boolean {
  if (!me.permissions.includes("call")) return false;
  return me.permissions.includes("admin") || requestedBy === undefined || requestedBy === me.id;
}

export async function decide(
  api: Api,
  runId: string,
  callId: string,
  verdict: "approve" | "deny",
  reason: string,
): Promise<CallView> {
  const trimmed = reason.trim();
  return api.post<CallView>(
    `${callPath(runId, callId)}/${verdict}`,
    trimmed ? { reason: trimmed } : undefined,
  );
}

export function cancel(api: Api, runId: string, callId: string): Promise<CallView> {
  return api.post<CallView>(`${callPath(runId, callId)}/cancel`);
}

export function getCall(api: Api, runId: string, callId: string, signal?: AbortSignal) {
  return api.get<CallView>(callPath(runId, callId), signal ? { signal } : {});
}

/** What the person reads after a decision. */
export function decidedText(call: CallView, verdict: "approve" | "deny"): string {
  if (verdict === "approve") {
    return `Approved: ${call.toolId} call ${call.callId} is ${call.status === "pending" ? "on its way" : call.status}.`;
  }
  return `Denied: ${call.toolId} call ${call.callId} fails as denied.`;
}

/** What the person reads after asking a call to stop. */
export function cancelledText(call: CallView): string {
  if (call.status === "failed" || call.status === "succeeded") {
    return `Call ${call.callId} ${call.result?.failure?.kind === "cancelled" ? "was cancelled before it started" : `had already ${call.status}`}.`;
  }
  return `Asked call ${call.callId} to stop; it ends cancelled unless it finishes first.`;
}

/**
 * A button whose visible text is short (Approve) and whose accessible name also names the
 * call it acts on, so a list of them can be told apart by ear.
 */
export function actionButton(
  label: string,
  context: string,
  props: { key: string; kind?: "danger" | "quiet"; onclick: (event: Event) => void },
): HTMLButtonElement {
  return h(
    "button",
    {
      type: "button",
      "data-key": props.key,
      ...(props.kind ? { class: props.kind } : {}),
      onclick: props.onclick,
    },
    label,
    h("span", { class: "visually-hidden" }, ` ${context}`),
  );
}

/**
 * The Approve / Deny controls of a call, with an optional reason; `done` hears the decision.
 * The note shows how it went and is announced (role status / alert).
 */
export function decisionControls(options: {
  api: Api;
  runId: string;
  callId: string;
  toolId: string;
  /** Unique on the page: the reason input's id. */
  idPrefix: string;
  note: HTMLElement;
  done?: (call: CallView, verdict: "approve" | "deny") => void;
  /** Keeps the reason input across re-renders of the surrounding view. */
  reason?: HTMLInputElement;
}): HTMLElement {
  const reasonId = `${options.idPrefix}-reason`;
  const reason =
    options.reason ??
    h("input", {
      id: reasonId,
      name: "reason",
      type: "text",
      maxlength: 1000,
      autocomplete: "off",
      "data-key": "reason",
    });
  reason.id = reasonId;
  const context = `call ${options.callId} (${options.toolId})`;
  const buttons: HTMLButtonElement[] = [];
  const act = (verdict: "approve" | "deny") => () =>
    busy(buttons, async () => {
      options.note.replaceChildren();
      try {
        const call = await decide(
          options.api,
          options.runId,
          options.callId,
          verdict,
          reason.value,
        );
        options.note.replaceChildren(notice("success", decidedText(call, verdict)));
        options.done?.(call, verdict);
      } catch (error) {
        options.note.replaceChildren(
          errorNotice(error, {
            what: verdict === "approve" ? "Could not approve" : "Could not deny",
          }),
        );
      }
    });
  buttons.push(
    actionButton("Approve", context, { key: "approve", onclick: act("approve") }),
    actionButton("Deny", context, { key: "deny", kind: "danger", onclick: act("deny") }),
  );
  return h(
    "div",
    { class: "decision" },
    h(
      "div",
      { class: "decision-reason" },
      h("label", { for: reasonId }, "Reason (optional)"),
      reason,
    ),
    h("div", { class: "decision-buttons" }, ...buttons),
  );
}
