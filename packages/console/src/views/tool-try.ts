import type { callAcceptedView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { ApiError } from "../api";
import { h, notice, replace } from "../dom";
import { href, segment, type ViewContext } from "../view";
import { busy, duration, errorNotice, pause } from "../widgets";
import type { Tool } from "./catalog-common";
import type { CallView } from "./run-actions";
import { type SchemaForm, schemaForm } from "./tool-form";
import { renderCall } from "./tool-result";

/**
 * The tool page's Try-it form: fields from the input schema, and a real call under a new run
 * (`POST /v1/runs/{runId}/calls` with `wait`), polled until it finishes when the wait was not
 * enough. The API validates; its 400 details are shown under the fields they name.
 */

/** How long the API may hold the request for the result, in seconds (the stage caps it). */
const WAIT_SECONDS = 20;
/**
 * Waits between reads of a call that goes on (one waiting for approval may take hours; each
 * read is a request, on AWS a function invocation): growing, then the last again.
 */
const POLL_MS = [1_000, 2_000, 5_000, 15_000];
/** After this long the page stops reading and points to the run's timeline. */
const POLL_FOR_MS = 5 * 60_000;

type Accepted = z.infer<typeof callAcceptedView>;

function randomPart(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function finished(call: CallView): boolean {
  return call.status === "succeeded" || call.status === "failed";
}

export interface TryIt {
  section: HTMLElement;
  form: SchemaForm;
}

export function tryItSection(context: ViewContext, tool: Tool, available = true): TryIt {
  const { api, signal } = context;
  const form = schemaForm(tool.inputSchema, "try");
  const submit = h("button", { type: "submit" }, "Call the tool");
  const output = h("div", { class: "call-output", "aria-live": "polite" });

  const run = async () => {
    form.clearErrors();
    const { input, problems } = form.collect();
    if (problems > 0) {
      form.firstProblem()?.focus();
      return;
    }
    const runId = `console-${randomPart()}`;
    const callId = `call-${randomPart()}`;
    replace(output, notice("info", "Calling ", tool.title, "…"));
    try {
      const answer = await api.post<CallView | Accepted>(
        `/v1/runs/${segment(runId)}/calls`,
        { tool: tool.id, input, callId, wait: WAIT_SECONDS },
        { signal },
      );
      let call: CallView | undefined = "parentRunId" in answer ? answer : undefined;
      const since = Date.now();
      for (let poll = 0; !call || !finished(call); poll += 1) {
        if (Date.now() - since >= POLL_FOR_MS) {
          replace(output, waiting(call, runId, true));
          return;
        }
        replace(output, waiting(call, runId, false));
        await pause(POLL_MS[Math.min(poll, POLL_MS.length - 1)] ?? 15_000, signal);
        if (signal.aborted) return;
        call = await api.get<CallView>(`/v1/runs/${segment(runId)}/calls/${segment(callId)}`, {
          signal,
        });
      }
      replace(output, renderCall(call, runId));
      output.querySelector<HTMLElement>("#call-result-title")?.focus();
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status === 400) {
        replace(output);
        form.showErrors(error.body.details, error.message);
        form.firstProblem()?.focus();
      } else {
        replace(
          output,
          errorNotice(error, {
            what: error instanceof ApiError ? "The call was refused" : "The call could not be made",
          }),
        );
      }
    }
  };

  const section = h(
    "section",
    { class: "try-it card", "aria-labelledby": "try-it-title" },
    h("h2", { id: "try-it-title" }, "Try it"),
    h(
      "p",
      { class: "hint" },
      "Makes a real call as you, under a new run; the run's timeline shows it afterwards.",
    ),
    !available &&
      notice(
        "info",
        "This tool is not available to you now (see Availability above): a call is refused or fails, and says why.",
      ),
    h(
      "form",
      {
        novalidate: true,
        "aria-labelledby": "try-it-title",
        onsubmit: (event: Event) => {
          event.preventDefault();
          void busy(submit, run);
        },
      },
      form.element,
      submit,
    ),
    output,
  );
  return { section, form };
}

/** A call that goes on; `gaveUp` once the page has stopped reading it. */
function waiting(call: CallView | undefined, runId: string, gaveUp: boolean): HTMLElement {
  const progress = call?.progress;
  return notice(
    "info",
    `The call is ${call?.status ?? "scheduled"}`,
    progress
      ? `: ${progress.progress}${progress.total !== undefined ? ` of ${progress.total}` : ""}${progress.message ? ` (${progress.message})` : ""}`
      : "",
    ". ",
    gaveUp ? `It goes on, but this page stopped checking after ${duration(POLL_FOR_MS)}: ` : "",
    h(
      "a",
      { href: href(`/runs/${segment(runId)}`) },
      gaveUp ? "follow it on the run's timeline" : "Follow it on the run's timeline",
    ),
    gaveUp ? "." : "",
  );
}
