import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system.stop());

const TEXT = "The cat sat on the mat. It was happy.";

async function expectError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect(response.headers.get("server")).toBeNull();
  expect(response.headers.get("x-powered-by")).toBeNull();
  const text = await response.text();
  expect(text).not.toMatch(/\bat .+:\d+:\d+|stack|ZodError|SyntaxError|HTTPException/);
  const body = JSON.parse(text) as { error: { code: string; message: string; details?: unknown } };
  expect(body.error.code).toBe(code);
  return body.error;
}

async function runEvents(runId: string): Promise<{ detailType: string }[]> {
  await system.settle();
  const response = await system.request(`/v1/runs/${runId}/events`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { events: { detailType: string }[] }).events;
}

/** The bad request neither recorded the call nor announced anything under the run. */
async function expectNothingWritten(runId: string, callId: string) {
  expect((await system.request(`/v1/runs/${runId}/calls/${callId}`)).status).toBe(404);
  expect(await runEvents(runId)).toEqual([]);
}

function post(runId: string, init: RequestInit & { json?: unknown; key?: string | null }) {
  return system.request(`/v1/runs/${runId}/calls`, { method: "POST", ...init });
}

describe("calling a tool", () => {
  it("returns the finished call with wait: the view, never internals", async () => {
    const runId = system.runId();
    const response = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId: "c1", wait: 10 },
    });
    expect(response.status).toBe(200);
    const call = (await response.json()) as Record<string, unknown> & {
      result: Record<string, unknown>;
    };
    expect(call).toMatchObject({
      parentRunId: runId,
      callId: "c1",
      toolId: "readability_analyzer",
      toolset: "text_analysis",
      status: "succeeded",
      requestedBy: { id: "admin-bootstrap", role: "admin" },
      scheduledAt: expect.any(String),
      startedAt: expect.any(String),
    });
    expect(Object.keys(call.result).sort()).toEqual(
      [
        "cached",
        "citations",
        "completedAt",
        "data",
        "durationMs",
        "output",
        "resultBytes",
        "stale",
        "truncated",
      ].sort(),
    );
    for (const internal of ["inputHash", "toolVersion", "deadlineAt", "resultPublishedAt"]) {
      expect(call).not.toHaveProperty(internal);
    }

    const again = await system.request(`/v1/runs/${runId}/calls/c1`);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(call);
  });

  it("answers a replay of a finished call with the same result and no new events", async () => {
    const runId = system.runId();
    const body = { tool: "readability_analyzer", input: { text: TEXT }, callId: "same", wait: 10 };
    const first = await post(runId, { json: body });
    expect(first.status).toBe(200);
    const before = await runEvents(runId);
    expect(before.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);

    const replay = await post(runId, { json: { ...body, wait: 0 } });
    expect(replay.status).toBe(200);
    expect(await replay.json()).toEqual(await first.json());
    expect(await runEvents(runId)).toHaveLength(2);
  });

  it("answers 202 with a status URL and Location when told not to wait", async () => {
    const runId = system.runId();
    const response = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId: "later", wait: 0 },
    });
    expect(response.status).toBe(202);
    const accepted = await response.json();
    expect(accepted).toEqual({
      callId: "later",
      status: "pending",
      statusUrl: `/v1/runs/${runId}/calls/later`,
    });
    expect(response.headers.get("location")).toBe(`/v1/runs/${runId}/calls/later`);
    await system.settle();
    const done = await system.request(`/v1/runs/${runId}/calls/later`);
    expect(await done.json()).toMatchObject({ status: "succeeded" });
  });

  it("answers 409 for the same call id with a different input, keeping the first call", async () => {
    const runId = system.runId();
    const first = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId: "dup", wait: 10 },
    });
    expect(first.status).toBe(200);
    const conflict = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: "Other words." }, callId: "dup" },
    });
    const error = await expectError(conflict, 409, "conflict");
    expect(error.message).toContain("dup");
    expect(await (await system.request(`/v1/runs/${runId}/calls/dup`)).json()).toEqual(
      await first.json(),
    );
    expect(await runEvents(runId)).toHaveLength(2);
  });

  it("answers 409 to another key naming a call's id, even with the same input, and tells it nothing of the call", async () => {
    const runId = system.runId();
    const first = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId: "mine", wait: 10 },
    });
    expect(first.status).toBe(200);
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "another-caller", role: "admin" },
    });
    const { key } = (await created.json()) as { key: string };
    const other = await post(runId, {
      key,
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId: "mine", wait: 10 },
    });
    const error = await expectError(other, 409, "conflict");
    expect(error.message).toContain("another key");
    expect(JSON.stringify(error)).not.toContain("succeeded");
    expect(await runEvents(runId)).toHaveLength(2);
  });

  it("answers 404 for an unknown call", async () => {
    await expectError(
      await system.request(`/v1/runs/${system.runId()}/calls/never`),
      404,
      "not_found",
    );
  });
});

describe("bad input is rejected before anything is written", () => {
  it("malformed JSON: 400 invalid_json", async () => {
    const runId = system.runId();
    const response = await post(runId, {
      headers: { "content-type": "application/json" },
      body: '{"tool": "readability_analyzer", "callId": "c", ',
    });
    await expectError(response, 400, "invalid_json");
    await expectNothingWritten(runId, "c");
  });

  it("wrong or missing content type: 415", async () => {
    const runId = system.runId();
    const body = JSON.stringify({
      tool: "readability_analyzer",
      input: { text: TEXT },
      callId: "c",
    });
    const cases: [Record<string, string>, string | Uint8Array][] = [
      [{ "content-type": "text/plain" }, body],
      [{ "content-type": "application/x-www-form-urlencoded" }, body],
      // Bytes get no default content type, unlike a string body (text/plain).
      [{}, new TextEncoder().encode(body)],
    ];
    for (const [headers, payload] of cases) {
      const response = await post(runId, { headers, body: payload });
      await expectError(response, 415, "unsupported_media_type");
    }
    await expectNothingWritten(runId, "c");
  });

  it("a body over 256 KB: 413, with or without Content-Length", async () => {
    const runId = system.runId();
    const body = JSON.stringify({
      tool: "readability_analyzer",
      input: { text: "word ".repeat(60_000) },
      callId: "c",
    });
    expect(body.length).toBeGreaterThan(256 * 1024);
    const withLength = await post(runId, {
      headers: { "content-type": "application/json", "content-length": String(body.length) },
      body,
    });
    await expectError(withLength, 413, "payload_too_large");
    const streamed = await post(runId, {
      headers: { "content-type": "application/json" },
      body: new Blob([body]).stream(),
      duplex: "half",
    } as RequestInit);
    await expectError(streamed, 413, "payload_too_large");
    await expectNothingWritten(runId, "c");
  });

  it("an unknown tool: 404", async () => {
    const runId = system.runId();
    const response = await post(runId, { json: { tool: "no_such_tool", input: {}, callId: "c" } });
    const error = await expectError(response, 404, "not_found");
    expect(error.message).toContain("no_such_tool");
    await expectNothingWritten(runId, "c");
  });

  it("input failing the tool's schema: 400 listing each failing path", async () => {
    const runId = system.runId();
    const response = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: 42, extra: true }, callId: "c" },
    });
    const error = await expectError(response, 400, "invalid_request");
    const details = error.details as { path: string; message: string }[];
    expect(details).toContainEqual({ path: "text", message: expect.any(String) });
    expect(details).toContainEqual({ path: "extra", message: "unknown field" });
    await expectNothingWritten(runId, "c");
  });

  it("a request body failing the call schema: 400 listing each failing path", async () => {
    const runId = system.runId();
    const response = await post(runId, {
      json: { tool: "Bad Tool", input: {}, callId: "c", wait: -1, surprise: 1 },
    });
    const error = await expectError(response, 400, "invalid_request");
    const paths = (error.details as { path: string }[]).map((d) => d.path).sort();
    expect(paths).toEqual(["surprise", "tool", "wait"]);
    await expectNothingWritten(runId, "c");
  });

  it("a run id with illegal characters or over 128 characters: 400", async () => {
    const body = { tool: "readability_analyzer", input: { text: TEXT }, callId: "c" };
    for (const runId of ["run%20one", "run$1", "-leading-dash", "r".repeat(129)]) {
      const error = await expectError(await post(runId, { json: body }), 400, "invalid_request");
      expect(error.details).toEqual([{ path: "runId", message: expect.any(String) }]);
      await expectError(await system.request(`/v1/runs/${runId}/calls/c`), 400, "invalid_request");
      await expectError(await system.request(`/v1/runs/${runId}/events`), 400, "invalid_request");
    }
    // The longest legal id is fine, so the limit is exactly 128.
    const longest = "r".repeat(128);
    expect((await post(longest, { json: { ...body, wait: 0 } })).status).toBe(202);
    const tooLong = await system.toolbus.stores.calls.get("r".repeat(129), "c");
    expect(tooLong).toBeUndefined();
  });

  it("a call id with illegal characters or over 128 characters: 400", async () => {
    const runId = system.runId();
    for (const callId of ["call one", "call/1", "c".repeat(129)]) {
      const response = await post(runId, {
        json: { tool: "readability_analyzer", input: { text: TEXT }, callId },
      });
      const error = await expectError(response, 400, "invalid_request");
      expect(error.details).toEqual([{ path: "callId", message: expect.any(String) }]);
    }
    await expectError(
      await system.request(`/v1/runs/${runId}/calls/${"c".repeat(129)}`),
      400,
      "invalid_request",
    );
    expect(await runEvents(runId)).toEqual([]);
  });

  it("an unknown mode: 400", async () => {
    const runId = system.runId();
    const response = await post(runId, {
      json: { tool: "readability_analyzer", input: { text: TEXT }, callId: "c", mode: "party" },
    });
    await expectError(response, 400, "invalid_request");
    await expectNothingWritten(runId, "c");
  });
});
