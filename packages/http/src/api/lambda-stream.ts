import type { Writable } from "node:stream";
import { fallbackLogger } from "@toolbus/core/observability/log";

/**
 * What Lambda's Node.js runtime gives a function whose URL streams its response
 * (`InvokeMode: RESPONSE_STREAM`): the global `awslambda`, never an npm package.
 */
export interface LambdaStreamingRuntime {
  streamifyResponse<E, C>(
    handler: (event: E, responseStream: Writable, context: C) => Promise<void>,
  ): unknown;
  HttpResponseStream: {
    /** Writes the status and headers, then hands back the stream the body goes to. */
    from(
      stream: Writable,
      prelude: { statusCode: number; headers: Record<string, string>; cookies: string[] },
    ): Writable;
  };
}

/** A Function URL's request (payload format 2.0): only the fields a request is made of. */
export interface FunctionUrlEvent {
  rawPath: string;
  rawQueryString?: string;
  headers?: Record<string, string | undefined>;
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
  requestContext: { domainName?: string; http: { method: string } };
}

/** Anything that answers a Request: the Hono app. */
export interface FetchApp {
  fetch(request: Request): Response | Promise<Response>;
}

/** The runtime's `awslambda`, which exists only inside Lambda (and in tests that stand in for it). */
function lambdaStreamingRuntime(): LambdaStreamingRuntime {
  const runtime = (globalThis as { awslambda?: LambdaStreamingRuntime }).awslambda;
  if (!runtime) {
    throw new Error(
      "awslambda is not defined: this handler runs only in Lambda's Node.js runtime.",
    );
  }
  return runtime;
}

/** The Request a Function URL event stands for, aborted by `signal`. */
export function requestOfEvent(event: FunctionUrlEvent, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers.set(name, value);
  }
  if (event.cookies?.length) headers.set("cookie", event.cookies.join("; "));
  const host = headers.get("host") ?? event.requestContext.domainName ?? "localhost";
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const method = event.requestContext.http.method;
  const hasBody = event.body !== undefined && method !== "GET" && method !== "HEAD";
  return new Request(`https://${host}${event.rawPath}${query}`, {
    method,
    headers,
    signal,
    ...(hasBody
      ? { body: event.isBase64Encoded ? Buffer.from(event.body ?? "", "base64") : event.body }
      : {}),
  });
}

/**
 * A streaming Lambda handler for `app`. Unlike hono/aws-lambda's `streamHandle`, a client
 * that goes away ends the work: the request is aborted and the body cancelled, so an event
 * stream stops polling at once instead of holding the invocation (and its bill) until the
 * function's timeout. `before` runs first on every request (the bound secrets' first load).
 */
export function streamingHandler(
  app: FetchApp,
  options: { before?: () => Promise<void>; runtime?: LambdaStreamingRuntime } = {},
): unknown {
  const runtime = options.runtime ?? lambdaStreamingRuntime();
  return runtime.streamifyResponse<FunctionUrlEvent, unknown>(async (event, responseStream) => {
    const aborted = new AbortController();
    const abort = () => aborted.abort();
    responseStream.once("close", abort);
    responseStream.once("error", abort);
    const { response, failed } = await answer(app, event, aborted.signal, options.before);
    const headers: Record<string, string> = {};
    const cookies: string[] = [];
    response.headers.forEach((value, name) => {
      if (name === "set-cookie") cookies.push(value);
      else headers[name] = value;
    });
    const body = runtime.HttpResponseStream.from(responseStream, {
      statusCode: response.status,
      headers,
      cookies,
    });
    try {
      if (response.body) await pipeBody(response.body, body, aborted.signal);
    } finally {
      responseStream.off("close", abort);
      responseStream.off("error", abort);
      if (!body.destroyed && !body.writableEnded) body.end();
    }
    if (failed !== undefined) throw failed;
  });
}

/**
 * The app's answer to the event. A header the platform cannot carry (Headers refuses it) is
 * the caller's to fix: 400. The app answers its own errors; what fails before it could (the
 * secrets' first load) is answered 500, logged, and handed back to be rethrown, so the
 * invocation counts as an error and alarms.
 */
async function answer(
  app: FetchApp,
  event: FunctionUrlEvent,
  signal: AbortSignal,
  before: (() => Promise<void>) | undefined,
): Promise<{ response: Response; failed?: unknown }> {
  let request: Request;
  try {
    request = requestOfEvent(event, signal);
  } catch {
    return {
      response: errorResponse(400, "invalid_request", "The request's headers are not valid."),
    };
  }
  try {
    await before?.();
    return { response: await app.fetch(request) };
  } catch (error) {
    fallbackLogger().error("the streaming endpoint could not serve a request", { error });
    return {
      response: errorResponse(500, "internal", "The request could not be served."),
      failed: error,
    };
  }
}

const errorResponse = (status: number, code: string, message: string) =>
  Response.json({ error: { code, message } }, { status });

/** Copies `source` into `sink`, waiting for `sink` to drain; stops when `signal` aborts. */
async function pipeBody(
  source: ReadableStream<Uint8Array>,
  sink: Writable,
  signal: AbortSignal,
): Promise<void> {
  const reader = source.getReader();
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  signal.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) return;
      if (!sink.write(value)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            sink.off("drain", done);
            signal.removeEventListener("abort", done);
            resolve();
          };
          sink.once("drain", done);
          signal.addEventListener("abort", done, { once: true });
        });
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    signal.removeEventListener("abort", cancel);
    reader.releaseLock();
  }
}
