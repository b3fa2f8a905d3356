import { ApiError } from "../api";
import { h, notice, replace } from "../dom";
import { href, segment, type ViewContext } from "../view";
import type { Tool } from "./catalog-common";
import { type SchemaForm, schemaForm } from "./tool-form";
import { type CallView, renderCall } from "./tool-result";

/**
 * The tool page's Try-it form: fields from the input schema, and a real call under a new run
 * (`POST /v1/runs/{runId}/calls` with `wait`), polled until it finishes when the wait was not
 * enough. The API validates; its 400 details are shown under the fields they name.
 */

/** How long the API may hold the request for the result, in seconds (the stage caps it). */
const WAIT_SECONDS = 20;
const POLL_MS = 1000;

interface Accepted {
  callId: string;
  status: string;
  statusUrl: string;
}

function randomPart(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
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
    submit.disabled = true;
    replace(output, notice("info", "Calling ", tool.title, "…"));
    try {
      const answer = await api.post<CallView | Accepted>(
        `/v1/runs/${segment(runId)}/calls`,
        { tool: tool.id, input, callId, wait: WAIT_SECONDS },
        { signal },
      );
      let call: CallView | undefined = "parentRunId" in answer ? answer : undefined;
      while (!call || !finished(call)) {
        replace(output, waiting(call, runId));
        await pause(POLL_MS, signal);
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
          notice(
            "error",
            error instanceof ApiError
              ? `The call was refused (${error.status}): ${error.message}`
              : `The call could not be made: ${(error as Error).message}`,
          ),
        );
      }
    } finally {
      submit.disabled = false;
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
          void run();
        },
      },
      form.element,
      submit,
    ),
    output,
  );
  return { section, form };
}

function waiting(call: CallView | undefined, runId: string): HTMLElement {
  const progress = call?.progress;
  return notice(
    "info",
    `The call is ${call?.status ?? "scheduled"}`,
    progress
      ? `: ${progress.progress}${progress.total !== undefined ? ` of ${progress.total}` : ""}${progress.message ? ` (${progress.message})` : ""}`
      : "",
    ". ",
    h("a", { href: href(`/runs/${segment(runId)}`) }, "Follow it on the run's timeline"),
  );
}
