import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { DispatchNotStartedError, type ScheduledEnvelope, ToolbusError } from "@toolbus/core";
import {
  FUNCTIONS_ENV,
  lambdaClient,
  lambdaDispatcher,
  lambdaDispatcherFromEnv,
  parseFunctions,
} from "@toolbus/core/dispatch";
import type { CallRecord } from "@toolbus/wire/model";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

// ---- A stand-in for Lambda's Invoke API on loopback -----------------------------------------

interface Received {
  method: string | undefined;
  path: string | undefined;
  headers: IncomingMessage["headers"];
  body: string;
}

type Answer = (req: IncomingMessage, res: ServerResponse, received: Received) => void;

const FUNCTION = "toolbus-test-ToolWebSearch-0123abcd";
const INVOKE_PATH = `/2015-03-31/functions/${FUNCTION}/invocations`;

let answer: Answer = (_req, res) => res.end("null");
const received: Received[] = [];
/** Requests whose connection closed before an answer was written. */
const abandoned: Received[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (chunk) => {
    body += chunk;
  });
  req.on("end", () => {
    const request = { method: req.method, path: req.url, headers: req.headers, body };
    received.push(request);
    res.on("close", () => {
      if (!res.writableFinished) abandoned.push(request);
    });
    answer(req, res, request);
  });
});
let endpoint = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  received.length = 0;
  abandoned.length = 0;
  answer = (_req, res) => res.end("null");
});

/** The Lambda client the API builds (retries off), pointed at the stand-in. */
const client = (at = endpoint) =>
  lambdaClient({
    region: "us-east-1",
    endpoint: at,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });

const dispatcher = (at?: string) =>
  lambdaDispatcher({ client: client(at), functions: { "tools/web_search": FUNCTION } });

/** Answers as Lambda does with an error: its type in x-amzn-ErrorType, a JSON body. */
const lambdaError =
  (status: number, type: string, body: Record<string, unknown>): Answer =>
  (_req, res) => {
    res.writeHead(status, {
      "content-type": "application/json",
      "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazonaws.awslambda/`,
      "x-amzn-requestid": "req-1",
    });
    res.end(JSON.stringify(body));
  };

/** Answers as Lambda does when the function returned: its result as the body. */
const lambdaResult =
  (payload: unknown, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(200, {
      "content-type": "application/json",
      "x-amz-executed-version": "$LATEST",
      "x-amzn-requestid": "req-1",
      ...headers,
    });
    res.end(JSON.stringify(payload));
  };

// ---- Fixtures -------------------------------------------------------------------------------

const finished: CallRecord = {
  parentRunId: "run-1",
  callId: "call-1",
  toolId: "web_search",
  toolset: "research",
  toolVersion: "1.0.0",
  implementation: "builtin",
  input: { query: "toolbus" },
  inputHash: "0".repeat(64),
  status: "succeeded",
  requestedBy: { id: "agent-1", role: "agent" },
  scheduledAt: "2026-01-01T00:00:00.000Z",
  startedAt: "2026-01-01T00:00:00.010Z",
  dispatch: "direct",
  result: {
    status: "succeeded",
    output: "found it",
    data: { hits: 1 },
    citations: [],
    cached: false,
    stale: false,
    durationMs: 12,
    resultBytes: 8,
    truncated: false,
    completedAt: "2026-01-01T00:00:00.022Z",
  },
};

const envelope: ScheduledEnvelope = {
  source: "toolbus",
  "detail-type": "ToolCallScheduled",
  time: finished.scheduledAt,
  detail: {
    eventKey: "run-1/call-1/scheduled",
    parentRunId: "run-1",
    callId: "call-1",
    toolId: "web_search",
    toolset: "research",
    implementation: "builtin",
    input: { query: "toolbus" },
    requestedBy: { id: "agent-1", role: "agent" },
    scheduledAt: finished.scheduledAt,
  } as ScheduledEnvelope["detail"],
};

const dispatchWeb = (at?: string, signal = new AbortController().signal) =>
  dispatcher(at).dispatch("tools/web_search", envelope, signal);

/** The rejection of a dispatch (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the dispatch to reject");
}

// ---- The dispatcher -------------------------------------------------------------------------

describe("the Lambda dispatcher, against a stand-in for Lambda's Invoke API", () => {
  it("invokes the handler's function synchronously with the envelope, once, and resolves with its call", async () => {
    answer = lambdaResult(finished);
    await expect(dispatchWeb()).resolves.toEqual(finished);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe(INVOKE_PATH);
    expect(request?.headers["x-amz-invocation-type"]).toBe("RequestResponse");
    expect(request?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 .*\/us-east-1\/lambda\//);
    expect(JSON.parse(request?.body ?? "")).toEqual(envelope);
  });

  it("resolves with nothing when the handler finished nothing (a null payload)", async () => {
    answer = lambdaResult(null);
    await expect(dispatchWeb()).resolves.toBeUndefined();
  });

  it("rejects, as a call that may have run, when the function threw (X-Amz-Function-Error)", async () => {
    answer = lambdaResult(
      { errorType: "PublishError", errorMessage: "the bus is down", trace: [] },
      { "x-amz-function-error": "Unhandled" },
    );
    const error = await rejection(dispatchWeb());
    expect(error).toBeInstanceOf(ToolbusError);
    expect(error).not.toBeInstanceOf(DispatchNotStartedError);
    expect((error as Error).message).toContain("PublishError");
    expect(received).toHaveLength(1);
  });

  it("rejects, as a call that may have run, when the answer is not a call", async () => {
    answer = lambdaResult({ statusCode: 200, body: "not a call" });
    const error = await rejection(dispatchWeb());
    expect(error).toBeInstanceOf(ToolbusError);
    expect(error).not.toBeInstanceOf(DispatchNotStartedError);
  });

  it("reports a throttle (429 TooManyRequestsException) as not started, after one request", async () => {
    answer = lambdaError(429, "TooManyRequestsException", {
      Reason: "ReservedFunctionConcurrentInvocationLimitExceeded",
      Type: "User",
      message: "Rate Exceeded.",
    });
    const error = await rejection(dispatchWeb());
    expect(error).toBeInstanceOf(DispatchNotStartedError);
    expect((error as Error).message).toContain("TooManyRequestsException");
    expect(received, "no retry by the SDK").toHaveLength(1);
  });

  it("reports a missing function (404 ResourceNotFoundException) as not started", async () => {
    answer = lambdaError(404, "ResourceNotFoundException", {
      Type: "User",
      Message: `Function not found: arn:aws:lambda:us-east-1:123456789012:function:${FUNCTION}`,
    });
    await expect(dispatchWeb()).rejects.toBeInstanceOf(DispatchNotStartedError);
    expect(received).toHaveLength(1);
  });

  it("reports a function still being updated (409 ResourceConflictException) as not started", async () => {
    answer = lambdaError(409, "ResourceConflictException", {
      Type: "User",
      message: "The operation cannot be performed at this time. An update is in progress.",
    });
    await expect(dispatchWeb()).rejects.toBeInstanceOf(DispatchNotStartedError);
  });

  it("rejects a Lambda service error (500 ServiceException) as a call that may have run, after one request", async () => {
    answer = lambdaError(500, "ServiceException", { Type: "Service", Message: "Internal error" });
    const error = await rejection(dispatchWeb());
    expect(error).toBeInstanceOf(ToolbusError);
    expect(error).not.toBeInstanceOf(DispatchNotStartedError);
    expect(received, "no retry by the SDK").toHaveLength(1);
  });

  it("rejects a reset connection as a call that may have run, after one request", async () => {
    answer = (req) => req.socket.destroy();
    const error = await rejection(dispatchWeb());
    expect(error).toBeInstanceOf(ToolbusError);
    expect(error).not.toBeInstanceOf(DispatchNotStartedError);
    expect(received).toHaveLength(1);
  });

  it("gives up promptly when the signal aborts mid-request, and the request is dropped", async () => {
    answer = () => {}; // The function is still running.
    const waiting = new AbortController();
    const dispatched = dispatchWeb(undefined, waiting.signal);
    const outcome = rejection(dispatched);
    await until(() => received.length === 1);
    const aborted = performance.now();
    waiting.abort();
    const error = await outcome;
    expect(performance.now() - aborted).toBeLessThan(1_000);
    // The caller stopped waiting: that says nothing of whether the call started.
    expect(error).not.toBeInstanceOf(DispatchNotStartedError);
    await until(() => abandoned.length === 1);
  });

  it("reports a refused connection as not started", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await rejection(dispatchWeb(`http://127.0.0.1:${port}`));
    expect(error).toBeInstanceOf(DispatchNotStartedError);
  });

  it("reports a handler it knows no function for as not started, without a request", async () => {
    const error = await rejection(
      dispatcher().dispatch("registered/mcp", envelope, new AbortController().signal),
    );
    expect(error).toBeInstanceOf(DispatchNotStartedError);
    await expect(
      dispatcher().dispatch("toString", envelope, new AbortController().signal),
    ).rejects.toBeInstanceOf(DispatchNotStartedError);
    expect(received).toHaveLength(0);
  });

  it("builds its client with retries off, whatever else it is given", async () => {
    const built = client();
    await expect(built.config.maxAttempts()).resolves.toBe(1);
    built.destroy();
  });
});

describe("lambdaDispatcherFromEnv", () => {
  it("returns nothing without TOOLBUS_FUNCTIONS (local runs keep the in-process default)", () => {
    expect(FUNCTIONS_ENV).toBe("TOOLBUS_FUNCTIONS");
    expect(lambdaDispatcherFromEnv({})).toBeUndefined();
  });

  it("builds a dispatcher over the named functions", async () => {
    answer = lambdaResult(finished);
    const fromEnv = lambdaDispatcherFromEnv(
      { TOOLBUS_FUNCTIONS: JSON.stringify({ "tools/web_search": FUNCTION }) },
      () => client(),
    );
    await expect(
      fromEnv?.dispatch("tools/web_search", envelope, new AbortController().signal),
    ).resolves.toEqual(finished);
    expect(received.map((r) => r.path)).toEqual([INVOKE_PATH]);
  });

  it.each([
    ["not JSON", "{tools/web_search: fn}", /TOOLBUS_FUNCTIONS is not valid JSON/],
    ["an array", '["fn"]', /TOOLBUS_FUNCTIONS is not a map of handler id -> Lambda function name/],
    ["empty", "", /TOOLBUS_FUNCTIONS is not valid JSON/],
    ["an empty object", "{}", /names no function/],
    [
      "a handler the API never dispatches to",
      '{"tools/web_search":"fn","recorder":"toolbus-recorder"}',
      /"recorder" is not a handler the API dispatches to/,
    ],
    [
      "a name Lambda would refuse",
      '{"tools/web_search":"no spaces allowed"}',
      /"tools\/web_search" must be a Lambda function name or unqualified function ARN/,
    ],
    [
      "a name that is not a string",
      '{"registered/http":42}',
      /"registered\/http" must be a Lambda function name .*not 42/,
    ],
  ])("refuses a TOOLBUS_FUNCTIONS that is %s, saying why", (_what, raw, message) => {
    expect(() => lambdaDispatcherFromEnv({ TOOLBUS_FUNCTIONS: raw }, () => client())).toThrow(
      message,
    );
  });

  it("accepts unqualified function ARNs, and names every bad entry at once", () => {
    const arn = `arn:aws:lambda:us-east-1:123456789012:function:${FUNCTION}`;
    expect(
      lambdaDispatcherFromEnv({ TOOLBUS_FUNCTIONS: JSON.stringify({ "registered/mcp": arn }) }),
    ).toBeDefined();
    expect(() =>
      lambdaDispatcherFromEnv({
        TOOLBUS_FUNCTIONS: JSON.stringify({ "registered/mcp": `${arn}:live`, sweeper: "fn" }),
      }),
    ).toThrow(/"registered\/mcp" must be .*; "sweeper" is not a handler/);
  });

  it("reads the former external/<kind> ids as registered/<kind>, the current id winning", () => {
    expect(
      parseFunctions(JSON.stringify({ "external/http": "old", "tools/web_search": "ws" })),
    ).toEqual({ "registered/http": "old", "tools/web_search": "ws" });
    expect(
      parseFunctions(JSON.stringify({ "external/mcp": "old", "registered/mcp": "new" })),
    ).toEqual({ "registered/mcp": "new" });
  });
});

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the stand-in");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
