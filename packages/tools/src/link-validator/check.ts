import { STATUS_CODES } from "node:http";
import { type HttpClient, OutboundError, type OutboundResponse } from "@toolbus/core/outbound";
import type { ToolContext } from "@toolbus/core/tool-definition";
import { mapWithConcurrency } from "./concurrency";
import {
  BUDGET_MS,
  LINK_CONCURRENCY,
  type LinkCheck,
  type LinkValidatorInput,
  type LinkValidatorOutput,
} from "./schemas";

/** The GET fallback only needs the status line; a range-capable server sends one byte. */
const GET_MAX_BYTES = 64 * 1024;
/** Answers to HEAD that say "not like this" rather than "this link is broken". */
const HEAD_REFUSED = new Set([400, 403, 405, 501]);

/** Runs link_validator: what its `execute` loads on first use. */
export async function runLinkValidator(
  input: LinkValidatorInput,
  { http, signal, progress }: Pick<ToolContext<unknown>, "http" | "signal" | "progress">,
) {
  const urls = distinct(input.urls);
  // Past the budget, unfinished checks end as timeouts and the rest still come back.
  const budget = AbortSignal.any([signal, AbortSignal.timeout(BUDGET_MS)]);
  let checked = 0;
  const results = await mapWithConcurrency(urls, LINK_CONCURRENCY, async (url) => {
    const result = await checkLink(http, url, input.timeout_ms, budget);
    // Links checked so far, out of all: a long list shows how far it is (throttled upstream).
    checked += 1;
    progress(checked, urls.length, `${checked} of ${urls.length} links checked`);
    return result;
  });
  const data: LinkValidatorOutput = { results, summary: summarize(results) };
  return { output: describe(data), data };
}

/** Checks one URL: HEAD, then GET when HEAD is refused. Never throws. */
export async function checkLink(
  http: HttpClient,
  url: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<LinkCheck> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  if (signal.aborted) {
    return { url, reachable: false, redirects: [], latencyMs: 0, error: abortedError() };
  }
  const common = { timeoutMs, retries: 0, signal, headers: { accept: "*/*" } };

  let headStatus: number | undefined;
  try {
    const head = await http.request(url, { ...common, method: "HEAD" });
    if (!HEAD_REFUSED.has(head.status)) return answered(url, head, elapsed());
    headStatus = head.status;
  } catch (error) {
    if (!headMayBeTheProblem(error)) return failed(url, error, elapsed());
  }

  const how =
    headStatus === undefined
      ? "HEAD failed; checked with GET"
      : `HEAD answered ${headStatus}; checked with GET`;
  try {
    const get = await http.request(url, {
      ...common,
      method: "GET",
      maxBytes: GET_MAX_BYTES,
      headers: { accept: "*/*", range: "bytes=0-0" },
    });
    // 416 to "the first byte" means the resource exists and is empty.
    if (get.status === 416) {
      const { error: _, ...result } = answered(
        url,
        get,
        elapsed(),
        `${how}; the resource is empty`,
      );
      return { ...result, reachable: true };
    }
    return answered(url, get, elapsed(), how);
  } catch (error) {
    if (error instanceof OutboundError && error.kind === "too_large") {
      // The server ignored the range and streamed a large body: it is serving the page, but
      // the client gives up before handing back the status line, so none is reported.
      return {
        url,
        reachable: true,
        redirects: [],
        latencyMs: elapsed(),
        note: `${how}; the body was larger than ${GET_MAX_BYTES / 1024} KB, status not confirmed`,
      };
    }
    return failed(url, error, elapsed());
  }
}

/** Connection codes that GET would meet just the same; other network failures may be HEAD's. */
const HOST_DOWN = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** Some servers reset or hang up on HEAD while serving GET normally. */
function headMayBeTheProblem(error: unknown): boolean {
  if (!(error instanceof OutboundError) || error.kind !== "network") return false;
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return code === undefined || !HOST_DOWN.has(code);
}

function answered(
  url: string,
  response: OutboundResponse,
  latencyMs: number,
  note?: string,
): LinkCheck {
  const { status } = response;
  const reachable = status >= 200 && status < 400;
  const contentType = response.headers.get("content-type") ?? undefined;
  return {
    url,
    reachable,
    status,
    finalUrl: response.url,
    redirects: response.redirects,
    ...(contentType ? { contentType } : {}),
    latencyMs,
    ...(note ? { note } : {}),
    ...(reachable ? {} : { error: { kind: "http", message: statusLine(status) } }),
  };
}

function failed(url: string, error: unknown, latencyMs: number): LinkCheck {
  return { url, reachable: false, redirects: [], latencyMs, error: describeError(error) };
}

function describeError(error: unknown): NonNullable<LinkCheck["error"]> {
  if (!(error instanceof OutboundError)) {
    return { kind: "network", message: "the check failed unexpectedly" };
  }
  switch (error.kind) {
    case "blocked":
      return {
        kind: "blocked",
        message:
          "the link or one of its redirects points to a private, loopback or metadata " +
          "address this stage may not reach",
      };
    case "timeout":
      return { kind: "timeout", message: "no complete answer within the timeout" };
    case "aborted":
      return abortedError();
    case "too_many_redirects":
      return {
        kind: "too_many_redirects",
        message: "too many redirects (a loop, or a long chain)",
      };
    case "invalid_url":
      return { kind: "invalid_url", message: "the link or a redirect is not a valid http(s) URL" };
    case "too_large":
      return { kind: "network", message: "the answer was larger than allowed" };
    case "network":
      // The client's messages name the failure (DNS, refused, reset) and nothing secret.
      return { kind: "network", message: error.message };
  }
}

function abortedError(): NonNullable<LinkCheck["error"]> {
  return { kind: "timeout", message: "not checked before the call's time budget ran out" };
}

function statusLine(status: number): string {
  const reason = STATUS_CODES[status];
  return reason ? `${status} ${reason}` : `HTTP ${status}`;
}

/** Keeps the first of URLs that are the same once parsed ("HTTPS://A.com" = "https://a.com/"). */
function distinct(urls: readonly string[]): string[] {
  const seen = new Set<string>();
  return urls.filter((url) => {
    let key = url;
    try {
      key = new URL(url).href;
    } catch {}
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function summarize(results: readonly LinkCheck[]): LinkValidatorOutput["summary"] {
  const reachable = results.filter((r) => r.reachable).length;
  const blocked = results.filter((r) => r.error?.kind === "blocked").length;
  return {
    total: results.length,
    reachable,
    broken: results.length - reachable - blocked,
    blocked,
  };
}

function describe({ results, summary }: LinkValidatorOutput): string {
  const lines = [
    `Checked ${summary.total} ${summary.total === 1 ? "link" : "links"}: ` +
      `${summary.reachable} reachable, ${summary.broken} broken, ${summary.blocked} blocked.`,
  ];
  const broken = results.filter((r) => !r.reachable && r.error?.kind !== "blocked");
  const blocked = results.filter((r) => r.error?.kind === "blocked");
  const reachable = results.filter((r) => r.reachable);
  if (broken.length > 0) {
    lines.push("", "Broken:");
    for (const r of broken) lines.push(`- ${r.url} — ${problem(r)}`);
  }
  if (blocked.length > 0) {
    lines.push("", "Blocked (not checked):");
    for (const r of blocked) lines.push(`- ${r.url}`);
  }
  if (reachable.length > 0) {
    lines.push("", "Reachable:");
    for (const r of reachable) {
      const moved = r.finalUrl && r.finalUrl !== r.url ? ` → ${r.finalUrl}` : "";
      const hops = r.redirects.length > 0 ? ` (${plural(r.redirects.length, "redirect")})` : "";
      const details = [
        r.status === undefined ? "status not confirmed" : String(r.status),
        r.contentType?.split(";")[0]?.trim(),
        `${r.latencyMs} ms`,
      ].filter(Boolean);
      lines.push(`- ${r.url}${moved}${hops} — ${details.join(", ")}`);
    }
  }
  return lines.join("\n");
}

function problem(result: LinkCheck): string {
  const error = result.error;
  if (!error) return "unreachable";
  const moved =
    result.finalUrl && result.finalUrl !== result.url
      ? ` (after redirects to ${result.finalUrl})`
      : "";
  return error.kind === "http" ? `${error.message}${moved}` : `${error.kind}: ${error.message}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
