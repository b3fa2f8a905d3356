import { errorBody } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { ToolbusClientError } from "./errors.js";
import { lenient } from "./lenient.js";

export interface TransportOptions {
  baseUrl: string;
  /**
   * Where event streams are read: a URL, `false` for the base URL, or (absent) whatever the
   * API's `/health` names as its `streamUrl`, asked once, else the base URL.
   */
  streamUrl?: string | false;
  apiKey: string;
  fetch: typeof fetch;
  headers: Record<string, string>;
}

export interface SendOptions {
  /** Sent to the stage's streaming endpoint (event streams), not the base URL. */
  streaming?: boolean;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The one place requests are made: auth, URLs, error mapping and response checks. */
export class Transport {
  readonly #options: TransportOptions;
  readonly #base: string;
  #streamBase: Promise<string> | undefined;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.#base = checkedBase(options.baseUrl, "base URL");
    if (typeof options.streamUrl === "string") {
      this.#streamBase = Promise.resolve(checkedBase(options.streamUrl, "stream URL"));
    } else if (options.streamUrl === false) this.#streamBase = Promise.resolve(this.#base);
  }

  url(path: string, query: SendOptions["query"] = {}, base = this.#base): string {
    const url = new URL(`${base}${path}`);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.href;
  }

  /** Sends a request; a response that is not 2xx becomes a ToolbusClientError. */
  async send(method: string, path: string, options: SendOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      accept: "application/json",
      ...this.#options.headers,
      ...options.headers,
      authorization: `Bearer ${this.#options.apiKey}`,
    };
    if (options.json !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      const base = options.streaming ? await this.streamBase(options.signal) : this.#base;
      response = await this.#options.fetch(this.url(path, options.query, base), {
        method,
        headers,
        ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      // The caller's own abort stays an abort: it is not a failure of the service.
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      throw networkError(method, path, error);
    }
    if (!response.ok) throw await errorFromResponse(response, { method, path });
    return response;
  }

  /**
   * Where event streams go. On AWS the API (behind API Gateway, which buffers) names the
   * stage's streaming endpoint in `/health`; locally it names none and the API streams itself.
   * A named URL is used only where it is safe to send the key (`trustedStreamUrl`); an answer
   * that is not a 2xx is not remembered, so the next stream asks again.
   */
  async streamBase(signal?: AbortSignal): Promise<string> {
    if (this.#streamBase) return this.#streamBase;
    let response: Response;
    try {
      response = await this.#options.fetch(this.url("/health"), {
        headers: { accept: "application/json" },
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw networkError("GET", "/health", error);
    }
    if (!response.ok) return this.#base;
    const body = (await response.json().catch(() => undefined)) as { streamUrl?: unknown };
    const named = typeof body?.streamUrl === "string" ? body.streamUrl : undefined;
    const base =
      named && trustedStreamUrl(this.#base, named) ? checkedBase(named, "stream URL") : this.#base;
    this.#streamBase = Promise.resolve(base);
    return base;
  }

  /**
   * Sends a request and returns its JSON body, checked against `schema` (a view of
   * @toolbus/wire/schemas) when one is given.
   */
  async json<T>(
    method: string,
    path: string,
    options: SendOptions & { schema?: z.ZodType<T> } = {},
  ): Promise<T> {
    const response = await this.send(method, path, options);
    return readJson(response, options.schema);
  }
}

/**
 * Whether the key may follow the API's pointer to `named` for event streams: never from https
 * down to http; the same origin; a Lambda Function URL (how the stage's streaming endpoint is
 * served on AWS); or, for `npm start` and tests, loopback to loopback. Anything else — a cache
 * or gateway answering `/health` with a host of its own — is ignored, and streams stay on the
 * API's URL. A URL given as `streamUrl` is the caller's choice and is not checked this way.
 */
export function trustedStreamUrl(base: string, named: string): boolean {
  if (!URL.canParse(named)) return false;
  const from = new URL(base);
  const to = new URL(named);
  if (!/^https?:$/.test(to.protocol)) return false;
  if (from.protocol === "https:" && to.protocol !== "https:") return false;
  if (from.origin === to.origin) return true;
  if (to.protocol === "https:" && /\.lambda-url\.[a-z0-9-]+\.on\.aws$/.test(to.hostname)) {
    return true;
  }
  return isLoopback(from.hostname) && isLoopback(to.hostname);
}

const isLoopback = (host: string) =>
  host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** A base URL without its trailing `/`; it may carry a path (an API Gateway stage). */
function checkedBase(url: string, what: string): string {
  const base = url.replace(/\/+$/, "");
  if (!URL.canParse(base) || !/^https?:$/.test(new URL(base).protocol)) {
    throw new ToolbusClientError(
      "invalid_base_url",
      `The ${what} must be an http(s) URL, not ${JSON.stringify(url)}.`,
    );
  }
  return base;
}

/**
 * The response's JSON body, checked against `schema` read leniently: a field a newer server
 * adds passes through, one it promised and left out is an `invalid_response`.
 */
export async function readJson<T>(response: Response, schema?: z.ZodType<T>): Promise<T> {
  const requestId = response.headers.get("x-request-id") ?? undefined;
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    throw new ToolbusClientError("invalid_response", "The response body is not JSON.", {
      status: response.status,
      ...(requestId ? { requestId } : {}),
      cause: error,
    });
  }
  if (!schema) return body as T;
  const parsed = lenient(schema).safeParse(body);
  if (!parsed.success) {
    throw new ToolbusClientError(
      "invalid_response",
      "The response is not in the shape the API promises; is the endpoint a Toolbus API of this version?",
      {
        status: response.status,
        details: parsed.error.issues.map((issue) => ({
          path: issue.path.join(".") || "(body)",
          message: issue.message,
        })),
        ...(requestId ? { requestId } : {}),
        cause: parsed.error,
      },
    );
  }
  return parsed.data;
}

/** The API's `{ error: { code, message, details? } }`, or a plain description of what came. */
async function errorFromResponse(
  response: Response,
  where: { method: string; path: string },
): Promise<ToolbusClientError> {
  const requestId = response.headers.get("x-request-id") ?? undefined;
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  const context = {
    status: response.status,
    context: where,
    ...(requestId ? { requestId } : {}),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const parsed = lenient(errorBody).safeParse(body);
  if (parsed.success) {
    const { code, message, details } = parsed.data.error;
    return new ToolbusClientError(code, message, {
      ...context,
      ...(details !== undefined ? { details } : {}),
    });
  }
  // Not the API's error shape: a proxy or gateway answered. Its body is not repeated.
  const reason = response.statusText ? ` ${response.statusText}` : "";
  return new ToolbusClientError(
    `http_${response.status}`,
    `The endpoint answered HTTP ${response.status}${reason} without a Toolbus error body.`,
    context,
  );
}

export function networkError(method: string, path: string, cause: unknown): ToolbusClientError {
  const reason = describeCause(cause);
  return new ToolbusClientError(
    "network_error",
    `${method} ${path} got no response${reason ? `: ${reason}` : ""}.`,
    { cause, context: { method, path } },
  );
}

/** undici puts the useful part (ECONNREFUSED ...) in `cause`. */
export function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return "";
  const inner = cause.cause;
  if (inner instanceof Error) {
    const code = (inner as { code?: unknown }).code;
    return typeof code === "string" ? `${code} (${inner.message})` : inner.message;
  }
  return cause.message;
}

function parseRetryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
