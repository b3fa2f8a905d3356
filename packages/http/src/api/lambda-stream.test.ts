import { PassThrough, type Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  type FunctionUrlEvent,
  type LambdaStreamingRuntime,
  streamingHandler,
} from "./lambda-stream";

/** What Lambda's runtime does with a streaming handler's output: prelude, 8 NULs, body. */
const runtime: LambdaStreamingRuntime = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, prelude) {
      stream.write(JSON.stringify(prelude));
      stream.write(new Uint8Array(8));
      return stream;
    },
  },
};

type Handler = (event: FunctionUrlEvent, stream: Writable, context: unknown) => Promise<void>;

const event = (headers: Record<string, string> = {}): FunctionUrlEvent => ({
  rawPath: "/health",
  headers: { host: "stream.example", ...headers },
  requestContext: { http: { method: "GET" } },
});

/** Runs one event; the response as the client would read it, and how the invocation ended. */
async function invoke(handler: Handler, input: FunctionUrlEvent) {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk));
  const outcome = await handler(input, stream, {}).then(
    () => undefined,
    (error: unknown) => error,
  );
  const raw = Buffer.concat(chunks);
  const split = raw.indexOf(Buffer.alloc(8));
  return {
    prelude: JSON.parse(raw.subarray(0, split).toString()) as { statusCode: number },
    body: raw.subarray(split + 8).toString(),
    outcome,
  };
}

describe("the streaming Lambda handler", () => {
  it("answers the app's response, status and body", async () => {
    const handler = streamingHandler(
      { fetch: (request) => new Response(`hello ${new URL(request.url).host}`, { status: 201 }) },
      { runtime },
    ) as Handler;
    const { prelude, body, outcome } = await invoke(handler, event());
    expect(prelude.statusCode).toBe(201);
    expect(body).toBe("hello stream.example");
    expect(outcome).toBeUndefined();
  });

  it("refuses a header the platform cannot carry with a 400, without reaching the app", async () => {
    let reached = false;
    const handler = streamingHandler(
      {
        fetch: () => {
          reached = true;
          return new Response("no");
        },
      },
      { runtime },
    ) as Handler;
    const { prelude, body } = await invoke(handler, event({ "bad header": "x" }));
    expect(prelude.statusCode).toBe(400);
    expect(JSON.parse(body).error.code).toBe("invalid_request");
    expect(reached).toBe(false);
  });

  it("answers 500 and fails the invocation when it cannot start (the secrets' first load)", async () => {
    const broken = new Error("SSM said no");
    const handler = streamingHandler(
      { fetch: () => new Response("never") },
      { runtime, before: () => Promise.reject(broken) },
    ) as Handler;
    const { prelude, body, outcome } = await invoke(handler, event());
    expect(prelude.statusCode).toBe(500);
    expect(body).not.toContain("SSM said no");
    expect(outcome).toBe(broken);
  });

  it("aborts the request and stops reading the body when the response stream closes", async () => {
    let aborted = false;
    const handler = streamingHandler(
      {
        fetch: (request) => {
          request.signal.addEventListener("abort", () => {
            aborted = true;
          });
          // A body that never ends by itself, as an event stream.
          return new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array([1])) }));
        },
      },
      { runtime },
    ) as Handler;
    const stream = new PassThrough();
    stream.resume();
    const done = handler(event(), stream, {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    stream.destroy();
    await done;
    expect(aborted).toBe(true);
  });
});
