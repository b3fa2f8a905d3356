import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import type { OutboundConfig } from "@toolbus/core/outbound";
import {
  type RecordedRequest,
  type Route,
  startUpstream,
  testToolContext,
  type Upstream,
} from "@toolbus/core/testing";
import type { ToolContext } from "@toolbus/core/tool-definition";

export function sendJson(
  response: ServerResponse,
  body: unknown,
  status = 200,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  response.end(typeof body === "string" ? body : JSON.stringify(body));
}

export function sendHtml(response: ServerResponse, html: string, status = 200): void {
  response.writeHead(status, { "content-type": "text/html; charset=UTF-8" });
  response.end(html);
}

/** A fixture under test/fixtures/<tool>/. */
export function fixture(tool: string, name: string): string {
  return readFileSync(
    new URL(`../../../../test/fixtures/${tool}/${name}`, import.meta.url),
    "utf8",
  );
}

/**
 * A context whose HTTP client is the real one, allowed to reach loopback only. `signal`
 * stands in for the tool's timeout.
 */
export function loopbackContext<S>(
  settings: S,
  options: {
    secrets?: Record<string, string>;
    signal?: AbortSignal;
    outbound?: Partial<OutboundConfig>;
    now?: () => Date;
  } = {},
): ToolContext<S> {
  const context = testToolContext(settings, {
    outbound: {
      userAgent: "test",
      allowHosts: ["127.0.0.1"],
      defaultTimeoutMs: 2_000,
      defaultMaxBytes: 1_000_000,
      networkEnabled: true,
      ...options.outbound,
    },
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return options.signal ? { ...context, signal: options.signal } : context;
}

export { type RecordedRequest, type Route, startUpstream, type Upstream };
