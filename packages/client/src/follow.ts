import { errorBody, typedRunEvent } from "@toolbus/wire/schemas";
import { ToolbusClientError } from "./errors.js";
import { networkError, type SendOptions, type Transport } from "./http.js";
import { lenient } from "./lenient.js";
import type { RunEvent } from "./schemas.js";
import { SseParser } from "./sse.js";

/** How a follower reconnects; shared by a run's events and the stage's. */
export interface FollowOptions {
  /** Ends the iteration quietly (no error) when it fires. */
  signal?: AbortSignal;
  /** Wait before reconnecting after the server ended a stream, ms (default 250; `retry:` wins). */
  reconnectDelayMs?: number;
  /** Failed connections in a row before the iteration throws (default 5). */
  maxRetries?: number;
}

/** Where a follower is: the last `id:` the server sent, which it resumes from. */
export interface FollowState {
  cursor: string | undefined;
}

const MAX_BACKOFF_MS = 10_000;

/**
 * Follows an event endpoint over server-sent events. The server puts the log's cursor as
 * `id:` on the last event of each page, so the events after the last id are the only ones a
 * reconnect can send again: they are remembered and skipped, and the caller sees each event
 * once. `state.cursor` is updated before the event that carried the id is yielded.
 */
export async function* followEvents(
  transport: Transport,
  path: string,
  query: SendOptions["query"],
  options: FollowOptions,
  state: FollowState,
): AsyncGenerator<RunEvent> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) stop.abort();
  const maxRetries = options.maxRetries ?? 5;
  let delayMs = options.reconnectDelayMs ?? 250;
  let failures = 0;
  let sinceCursor = new Set<string>();
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;

  try {
    while (!stop.signal.aborted) {
      let problem: ToolbusClientError | undefined;
      try {
        const response = await transport.send("GET", path, {
          streaming: true,
          query,
          headers: {
            accept: "text/event-stream",
            ...(state.cursor ? { "last-event-id": state.cursor } : {}),
          },
          signal: stop.signal,
        });
        if (!/^text\/event-stream/i.test(response.headers.get("content-type") ?? "")) {
          throw new ToolbusClientError(
            "invalid_response",
            "The endpoint did not answer with an event stream.",
            { status: response.status },
          );
        }
        if (!response.body) throw new ToolbusClientError("invalid_response", "No stream body.");
        reader = response.body.getReader();
        const decoder = new TextDecoder();
        const parser = new SseParser();
        for (;;) {
          const chunk = await reader.read();
          const messages = chunk.done
            ? [...parser.push(decoder.decode()), ...parser.end()]
            : parser.push(decoder.decode(chunk.value, { stream: true }));
          for (const message of messages) {
            if (message.retry !== undefined) delayMs = message.retry;
            if (message.event === "error") {
              problem = streamError(message.data);
              continue;
            }
            const event = message.data === undefined ? undefined : parseEvent(message.data);
            const repeated = event !== undefined && sinceCursor.has(event.eventKey);
            if (message.id !== undefined) {
              state.cursor = message.id;
              sinceCursor = new Set();
            } else if (event) {
              sinceCursor.add(event.eventKey);
            }
            if (event && !repeated) {
              failures = 0;
              yield event;
            }
          }
          if (chunk.done) break;
        }
        reader = undefined;
      } catch (error) {
        if (stop.signal.aborted) return;
        if (error instanceof ToolbusClientError && !error.retryable) throw error;
        problem = error instanceof ToolbusClientError ? error : networkError("GET", path, error);
      }
      if (problem) {
        failures++;
        if (failures > maxRetries) throw problem;
        await pause(backoff(delayMs, failures), stop.signal);
      } else {
        // The server ended the stream on purpose (its maximum duration): come back.
        failures = 0;
        await pause(delayMs, stop.signal);
      }
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    stop.abort();
    await reader?.cancel().catch(() => undefined);
  }
}

function parseEvent(data: string): RunEvent {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch (error) {
    throw new ToolbusClientError("invalid_response", "An event's data is not JSON.", {
      cause: error,
    });
  }
  const parsed = lenient(typedRunEvent).safeParse(json);
  if (!parsed.success) {
    throw new ToolbusClientError("invalid_response", "An event is not a run event.", {
      details: parsed.error.issues.map((issue) => ({
        path: issue.path.join(".") || "(event)",
        message: issue.message,
      })),
      cause: parsed.error,
    });
  }
  return parsed.data as RunEvent;
}

/** The server's `event: error` frame (same shape as JSON errors): it ends that stream. */
function streamError(data: string | undefined): ToolbusClientError {
  let body: unknown;
  try {
    body = JSON.parse(data ?? "");
  } catch {
    body = undefined;
  }
  const parsed = lenient(errorBody).safeParse(body);
  const { code, message } = parsed.success
    ? parsed.data.error
    : { code: "stream_error", message: "The event stream reported an error." };
  // Retryable by construction: the server asks the client to reconnect.
  return new ToolbusClientError(code, message, { status: 503 });
}

function backoff(baseMs: number, failures: number): number {
  const ms = Math.min(Math.max(baseMs, 100) * 2 ** (failures - 1), MAX_BACKOFF_MS);
  return ms / 2 + Math.random() * (ms / 2);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
