/**
 * The console's only way to the server: the same JSON API every client uses, with the
 * signed-in credential as a bearer token. A 401 means the credential no longer works (revoked,
 * expired): the console forgets it and asks the person to sign in again.
 */

import type { errorBody } from "@toolbus/wire/schemas";
import type { z } from "zod";

/** What the API says about a failure (its error body's `error`). */
export type ApiErrorBody = z.infer<typeof errorBody>["error"];

/** An answer that was not 2xx, with the API's own error body. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.message);
  }
}

export interface RequestOptions {
  method?: string;
  json?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  /** More request headers, e.g. `if-match` with the revision a change was decided on. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** One event of a `text/event-stream` answer. */
export interface StreamedEvent {
  event: string;
  id?: string;
  data: string;
}

export class Api {
  constructor(
    private readonly credential: string,
    private readonly onUnauthorized: (error: ApiError) => void,
    private readonly origin = "",
  ) {}

  get<T>(path: string, options: Omit<RequestOptions, "method" | "json"> = {}): Promise<T> {
    return this.request<T>(path, options);
  }

  post<T>(path: string, json?: unknown, options: Omit<RequestOptions, "method" | "json"> = {}) {
    return this.request<T>(path, { ...options, method: "POST", json });
  }

  put<T>(path: string, json?: unknown, options: Omit<RequestOptions, "method" | "json"> = {}) {
    return this.request<T>(path, { ...options, method: "PUT", json });
  }

  delete<T>(path: string, options: Omit<RequestOptions, "method" | "json"> = {}): Promise<T> {
    return this.request<T>(path, { ...options, method: "DELETE" });
  }

  async request<T>(path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = {
      ...options.headers,
      authorization: `Bearer ${this.credential}`,
      accept: "application/json",
    };
    if (options.json !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(this.url(path, options.query), {
      method: options.method ?? "GET",
      headers,
      ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) }),
      ...(options.signal ? { signal: options.signal } : {}),
      credentials: "omit",
      cache: "no-store",
    });
    if (!response.ok) throw await this.failure(response);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Reads a `text/event-stream` answer with fetch, which can send the bearer header (an
   * EventSource cannot), handing each event to `onEvent` until the stream ends or `signal`
   * aborts. Resolves with the last event id seen, for the caller to resume from.
   */
  async stream(
    path: string,
    onEvent: (event: StreamedEvent) => void,
    options: {
      signal: AbortSignal;
      lastEventId?: string;
      query?: RequestOptions["query"];
      /** Called once the server has answered 200 and events may flow. */
      onOpen?: () => void;
    },
  ): Promise<string | undefined> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.credential}`,
      accept: "text/event-stream",
    };
    if (options.lastEventId) headers["last-event-id"] = options.lastEventId;
    const response = await fetch(this.url(path, options.query), {
      headers,
      signal: options.signal,
      credentials: "omit",
      cache: "no-store",
    });
    if (!response.ok) throw await this.failure(response);
    options.onOpen?.();
    let lastId = options.lastEventId;
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) return lastId;
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      // Events end with a blank line; what follows the last one waits for more text.
      for (let end = BLANK_LINE.exec(buffer); end; end = BLANK_LINE.exec(buffer)) {
        const event = parseEvent(buffer.slice(0, end.index));
        buffer = buffer.slice(end.index + end[0].length);
        if (!event) continue;
        if (event.id) lastId = event.id;
        onEvent(event);
      }
    }
    return lastId;
  }

  private url(path: string, query: RequestOptions["query"]): string {
    const url = new URL(this.origin + path, location.origin);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== "") url.searchParams.set(name, String(value));
    }
    return url.href;
  }

  private async failure(response: Response): Promise<ApiError> {
    let body: ApiErrorBody = {
      code: "http_error",
      message: `The API answered ${response.status}.`,
    };
    try {
      const parsed = (await response.json()) as { error?: ApiErrorBody };
      if (parsed?.error?.message) body = parsed.error;
    } catch {
      // Not the API's JSON (a proxy's page): the status says enough.
    }
    const error = new ApiError(response.status, body);
    if (response.status === 401) this.onUnauthorized(error);
    return error;
  }
}

const BLANK_LINE = /\r?\n\r?\n/;

function parseEvent(block: string): StreamedEvent | undefined {
  let event = "message";
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return undefined;
  return { event, data: data.join("\n"), ...(id === undefined ? {} : { id }) };
}
