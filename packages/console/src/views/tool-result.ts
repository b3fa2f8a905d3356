import { facts, h, json, notice } from "../dom";
import { href, segment } from "../view";
import { duration } from "../widgets";
import type { CallView } from "./run-actions";

/**
 * A call as the API returns it, shown for a person: its status, the text, the structured
 * output as JSON, its content blocks (an image as an image, from a data URL the page's policy
 * allows), a failure with its kind and what to do, and a link to the run's timeline.
 */

type CallResult = NonNullable<CallView["result"]>;
type ContentBlock = NonNullable<CallResult["content"]>[number];

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const IMAGE_TYPE = /^image\/[A-Za-z0-9.+-]+$/;

const RECOVERY: Record<string, string> = {
  correct_call: "Fix the input and call again.",
  replan: "Stop using this tool for now and try another way.",
  finish: "Stop here.",
};

/** An http(s) address as a link; anything else (javascript:, data:) as text. */
export function safeLink(url: string, text?: string): HTMLElement | string {
  try {
    const parsed = new URL(url, location.href);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") {
      return h("a", { href: parsed.href, rel: "noopener noreferrer" }, text ?? url);
    }
  } catch {
    // Not an address: shown as text.
  }
  return text ? `${text} (${url})` : url;
}

function bytesOf(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}

function block(content: ContentBlock, index: number): HTMLElement {
  const label = `Block ${index + 1}`;
  switch (content.type) {
    case "text":
      return h("div", { class: "content-block" }, h("pre", { class: "text" }, content.text ?? ""));
    case "image": {
      const data = content.data ?? "";
      const type = content.mimeType ?? "";
      if (IMAGE_TYPE.test(type) && BASE64.test(data)) {
        return h(
          "figure",
          { class: "content-block" },
          h("img", {
            class: "result",
            src: `data:${type};base64,${data}`,
            alt: `Image the tool returned (${type}, ${bytesOf(data)} bytes)`,
          }),
          h("figcaption", { class: "hint" }, `${label}: image, ${type}, ${bytesOf(data)} bytes`),
        );
      }
      return h(
        "p",
        { class: "content-block" },
        `${label}: an image that cannot be shown (${type}).`,
      );
    }
    case "audio":
      return h(
        "p",
        { class: "content-block" },
        `${label}: audio, ${content.mimeType ?? "unknown type"}, ${bytesOf(content.data ?? "")} bytes.`,
      );
    case "resource_link":
      return h(
        "p",
        { class: "content-block" },
        `${label}: a link to `,
        safeLink(content.uri ?? "", content.name || content.uri),
      );
    case "resource": {
      const resource: Record<string, unknown> = content.resource ?? {};
      const text = typeof resource.text === "string" ? resource.text : undefined;
      const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : "data";
      return h(
        "div",
        { class: "content-block" },
        h("p", {}, `${label}: resource ${String(resource.uri ?? "")}`),
        text !== undefined
          ? h("pre", { class: "text" }, text)
          : h(
              "p",
              { class: "hint" },
              `${bytesOf(String(resource.blob ?? ""))} bytes of ${mimeType}`,
            ),
      );
    }
    default:
      return h("div", { class: "content-block" }, json(content));
  }
}

/** The call's result, with a heading that takes the focus when it arrives. */
export function renderCall(call: CallView, runId: string): HTMLElement {
  const result = call.result;
  const succeeded = call.status === "succeeded";
  const badge = h(
    "span",
    { class: `badge ${succeeded ? "ok" : call.status === "failed" ? "off" : "warn"}` },
    call.status,
  );
  const section = h(
    "section",
    { class: "call-result", "aria-labelledby": "call-result-title" },
    h("h2", { id: "call-result-title", tabindex: "-1" }, "Result"),
    facts([
      ["Status", badge],
      ["Call", h("code", {}, call.callId)],
      ["Run", h("a", { href: href(`/runs/${segment(runId)}`) }, "See the run's timeline")],
      ["Duration", result?.durationMs !== undefined ? duration(result.durationMs) : ""],
      ["Cached", result?.cached ? (result.stale ? "yes, stale" : "yes") : ""],
      ["Truncated", result?.truncated ? "yes: the text was cut to fit" : ""],
      [
        "Fallback",
        result?.fallback
          ? `${result.fallback.to} answered for ${result.fallback.from}: ${result.fallback.reason}`
          : "",
      ],
    ]),
  );
  if (!result) {
    section.append(notice("info", `The call is ${call.status}.`));
    return section;
  }
  const failure = result.failure;
  if (failure) {
    section.append(
      notice(
        "error",
        h("strong", {}, `Failed: ${failure.kind}. `),
        failure.message,
        h(
          "div",
          {},
          RECOVERY[failure.recovery] ?? failure.recovery,
          failure.retryable
            ? ` It may work if tried again${failure.retryAfterMs ? ` after ${duration(failure.retryAfterMs)}` : ""}.`
            : "",
        ),
        failure.connection &&
          h(
            "div",
            {},
            `Needs your ${failure.connection.provider} connection (${failure.connection.reason.replace("_", " ")}). `,
            failure.connection.connectUrl
              ? safeLink(failure.connection.connectUrl, "Connect it")
              : h("a", { href: href("/me") }, "Connect it on your page"),
          ),
      ),
    );
  } else {
    section.append(notice("success", `The call ${call.status}.`));
  }
  if (result.output) {
    section.append(h("h3", {}, "Text"), h("pre", { class: "text" }, result.output));
  }
  if (result.data !== undefined && result.data !== null) {
    section.append(h("h3", {}, "Structured output"), json(result.data));
  }
  if (result.content?.length) {
    section.append(h("h3", {}, "Content"), ...result.content.map(block));
  }
  if (result.citations?.length) {
    section.append(
      h("h3", {}, "Sources"),
      h(
        "ul",
        { class: "citations" },
        ...result.citations.map((citation) =>
          h(
            "li",
            {},
            safeLink(citation.url, citation.title || citation.url),
            citation.snippet && h("div", { class: "hint" }, citation.snippet),
          ),
        ),
      ),
    );
  }
  return section;
}
