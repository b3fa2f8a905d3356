import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@toolbus/client/cli";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { createApi } from "@toolbus/http";
import { type ApiServer, serveApi } from "@toolbus/local";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// `toolbus listen` against the real API over HTTP, in this process: the stage's event stream
// read by the client, forwarded to a real receiver on loopback, and checked with the
// Standard Webhooks reference library.

let system: TestToolbus;
let server: ApiServer;
/** The same system with streams that end after 300 ms, as on Lambda: clients must reconnect. */
let shortServer: ApiServer;
let receiver: Upstream;
let scratch: string;
/** Paths the receiver answers 500 on, with how many times it still will. */
const failing = new Map<string, number>();

beforeAll(async () => {
  receiver = await startUpstream((request, response) => {
    const left = failing.get(request.url.pathname) ?? 0;
    if (left > 0) {
      failing.set(request.url.pathname, left - 1);
      response.writeHead(500).end("not ready yet");
    } else response.writeHead(204).end();
  });
  // Loopback webhooks allowed: a subscription's deliveries are the reference for forwards.
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  server = await serveApi(system.app, { port: 0 });
  shortServer = await serveApi(
    createApi({ ...system.toolbus.apiDeps, followIntervalMs: 20, followMaxMs: 300 }),
    { port: 0 },
  );
  scratch = await mkdtemp(join(tmpdir(), "toolbus-cli-listen-"));
}, 60_000);

afterAll(async () => {
  await shortServer?.close();
  await server?.close();
  await system?.stop();
  await receiver?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

interface Request {
  accept: string | null;
  lastEventId: string | null;
}

/** Starts `toolbus listen <argv>`; it runs until `stop()` aborts it, as Ctrl-C does. */
function listen(argv: string[], options: { endpoint?: string } = {}) {
  const controller = new AbortController();
  const session = { stdout: "", stderr: "", requests: [] as Request[], exit: undefined as unknown };
  const exited = runCli(["listen", ...argv, "--endpoint", options.endpoint ?? server.url], {
    stdout: { write: (text: string) => (session.stdout += text) },
    stderr: { write: (text: string) => (session.stderr += text) },
    stdin: (async function* () {})(),
    env: { TOOLBUS_API_KEY: system.adminKey },
    cwd: scratch,
    signal: controller.signal,
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      session.requests.push({
        accept: headers.get("accept"),
        lastEventId: headers.get("last-event-id"),
      });
      return fetch(input, init);
    },
  }).then((code) => {
    session.exit = code;
    return code;
  });
  return {
    session,
    /** Resolves once it says it is listening: what happens from then on is in its stream. */
    async ready() {
      await expect
        .poll(() => session.exit ?? /^(Ready: |\{"listening")/m.test(session.stderr), {
          timeout: 10_000,
        })
        .toBe(true);
    },
    /** Output lines after the header row. */
    rows: () =>
      session.stdout
        .split("\n")
        .filter(Boolean)
        .slice(argv.includes("--json") ? 0 : 1),
    /** The event-stream connections made so far. */
    streams: () => session.requests.filter((request) => request.accept === "text/event-stream"),
    stop() {
      controller.abort();
      return exited;
    },
    /** Its exit code, for a run that ends by itself. */
    exited: () => exited,
  };
}

async function call(runId: string, callId: string) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: "Short words here." }, callId, wait: 10 },
  });
  expect(response.status).toBe(200);
  await system.settle();
}

const received = (path: string) =>
  receiver.requests.filter((request) => request.url.pathname === path);

const headersOf = (request: Upstream["requests"][number]) =>
  Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));

const TIME = "\\d{4}-\\d\\d-\\d\\dT\\S+Z";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 1;
}

describe("toolbus listen", () => {
  it("prints the events a pattern matches, of calls made while it listens, and no others", async () => {
    const runId = system.runId();
    const other = system.runId();
    const pattern = { "detail-type": ["ToolResultReceived"], detail: { parentRunId: [runId] } };
    const listener = listen(["--pattern", JSON.stringify(pattern)]);
    await listener.ready();
    expect(listener.session.stderr).toBe(
      `Ready: listening to events matching ${JSON.stringify(pattern)} from now on; Ctrl-C to stop.\n`,
    );
    // The other run's call comes first in the stream: once the matched event is printed,
    // the other run's were passed over.
    await call(other, "elsewhere");
    await call(runId, "matched");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(1);
    expect(await listener.stop()).toBe(130);

    const [header, ...rows] = listener.session.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^TIME +EVENT +TOOL +STATUS +RUN \/ CALL$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(
      new RegExp(
        `^${TIME} +ToolResultReceived +readability_analyzer +succeeded +${runId}/matched$`,
      ),
    );
    expect(listener.session.stdout).not.toContain(other);
    // Ctrl-C ends it without an error.
    expect(listener.session.stderr).not.toContain("toolbus:");
  });

  it("prints each event as JSON with --json, and where it started", async () => {
    const runId = system.runId();
    const pattern = { detail: { parentRunId: [runId] } };
    const listener = listen(["--pattern", JSON.stringify(pattern), "--json"]);
    await listener.ready();
    await call(runId, "one");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(2);
    expect(await listener.stop()).toBe(130);

    const events = listener.rows().map(
      (line) =>
        JSON.parse(line) as {
          eventKey: string;
          detailType: string;
          occurredAt: string;
          detail: { callId: string };
        },
    );
    expect(events.map((event) => [event.eventKey, event.detailType])).toEqual([
      [`${runId}/one/scheduled`, "ToolCallScheduled"],
      [`${runId}/one/result`, "ToolResultReceived"],
    ]);
    expect(JSON.parse(listener.session.stderr)).toEqual({
      listening: { cursor: expect.stringMatching(/^\d+$/), pattern },
    });
  });

  it("forwards each event signed with the secret it printed, as a subscription's webhook gets it", async () => {
    const runId = system.runId();
    const pattern = { detail: { parentRunId: [runId] } };
    // A subscription to the same events: its deliveries are what a forward must look like.
    const subscribed = `/subscribed/${runId}`;
    const created = await system.request("/v1/subscriptions", {
      method: "POST",
      json: {
        name: "reference",
        pattern,
        target: { kind: "webhook", url: `${receiver.origin}${subscribed}` },
      },
    });
    expect(created.status).toBe(201);

    const forwarded = `/forwarded/${runId}`;
    const url = `${receiver.origin}${forwarded}`;
    const listener = listen(["--pattern", JSON.stringify(pattern), "--forward-to", url]);
    await listener.ready();
    const { stderr } = listener.session;
    expect(stderr).toContain(`Forwarding each event to ${url}, signed the Standard Webhooks way.`);
    const secret =
      /^Webhook signing secret for this session \(give it to the receiver\): (whsec_\S+)$/m.exec(
        stderr,
      )?.[1] ?? "";
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    await call(runId, "one");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(2);
    expect(await listener.stop()).toBe(130);

    expect(listener.session.stdout.split("\n")[0]).toMatch(
      /^TIME +EVENT +TOOL +STATUS +FORWARD +RUN \/ CALL$/,
    );
    expect(listener.rows()).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${TIME} +ToolCallScheduled +readability_analyzer +scheduled +204 +${runId}/one$`,
        ),
      ),
      expect.stringMatching(
        new RegExp(
          `^${TIME} +ToolResultReceived +readability_analyzer +succeeded +204 +${runId}/one$`,
        ),
      ),
    ]);
    // Printed once, at the start, and nowhere else.
    expect(`${listener.session.stdout}${listener.session.stderr}`.split(secret)).toHaveLength(2);

    const forwards = received(forwarded);
    expect(forwards).toHaveLength(2);
    await expect.poll(() => received(subscribed).length, { timeout: 10_000 }).toBe(2);
    for (const request of forwards) {
      expect(request.method).toBe("POST");
      expect(request.headers["content-type"]).toBe("application/json");
      const payload = new Webhook(secret).verify(request.body, headersOf(request));
      // The webhook-id and the same body (timestamp included) as the subscription's delivery of that event, so a
      // receiver built against listen deduplicates and parses deliveries the same way.
      const delivery = received(subscribed).find(
        (candidate) => candidate.headers["webhook-id"] === request.headers["webhook-id"],
      );
      expect(delivery, String(request.headers["webhook-id"])).toBeDefined();
      expect(payload).toEqual(JSON.parse(delivery?.body ?? "null"));
      expect(Object.keys(payload as object)).toEqual(["type", "timestamp", "data"]);
    }
    expect(forwards.map((request) => (JSON.parse(request.body) as { type: string }).type)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("reports a receiver's failure and forwards the next event, signed with --secret", async () => {
    const runId = system.runId();
    const path = `/flaky/${runId}`;
    const url = `${receiver.origin}${path}`;
    failing.set(path, 1);
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const listener = listen([
      "--pattern",
      JSON.stringify({ detail: { parentRunId: [runId] } }),
      "--forward-to",
      url,
      "--secret",
      secret,
    ]);
    await listener.ready();
    expect(listener.session.stderr).toContain("Signing with the secret from --secret.");
    await call(runId, "one");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(2);
    expect(await listener.stop()).toBe(130);

    expect(listener.rows()).toEqual([
      expect.stringMatching(new RegExp(`^${TIME} +ToolCallScheduled +\\S+ +scheduled +500 +`)),
      expect.stringMatching(new RegExp(`^${TIME} +ToolResultReceived +\\S+ +succeeded +204 +`)),
    ]);
    expect(listener.session.stderr).toMatch(
      new RegExp(
        `^toolbus: forwarding ToolCallScheduled of ${runId}/one \\(webhook-id evt_[0-9a-f]{32}\\) to ${url} failed: answered 500 Internal Server Error: not ready yet; listening on\\.$`,
        "m",
      ),
    );
    expect(listener.session.stderr).not.toContain("ToolResultReceived");
    expect(`${listener.session.stdout}${listener.session.stderr}`).not.toContain(secret);
    const requests = received(path);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(() => new Webhook(secret).verify(request.body, headersOf(request))).not.toThrow();
    }
  });

  it("reports forwards as JSON on stderr with --json, a receiver that is not there included", async () => {
    const runId = system.runId();
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    const listener = listen([
      "--pattern",
      JSON.stringify({ "detail-type": ["ToolCallScheduled"], detail: { parentRunId: [runId] } }),
      "--forward-to",
      url,
      "--json",
    ]);
    await listener.ready();
    await call(runId, "one");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(1);
    expect(await listener.stop()).toBe(130);

    const [started, outcome, ...rest] = listener.session.stderr.trimEnd().split("\n");
    expect(rest).toEqual([]);
    const { listening } = JSON.parse(started ?? "") as { listening: { secret: string } };
    expect(listening).toMatchObject({ forwardTo: url, secret: expect.stringMatching(/^whsec_/) });
    expect(JSON.parse(outcome ?? "")).toEqual({
      forwarded: {
        eventKey: `${runId}/one/scheduled`,
        ok: false,
        webhookId: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        error: expect.stringContaining("no answer: ECONNREFUSED"),
      },
    });
    expect(JSON.parse(listener.rows()[0] ?? "")).toMatchObject({
      eventKey: `${runId}/one/scheduled`,
    });
  });

  it("reconnects with Last-Event-ID when the server ends the stream, missing and repeating nothing", async () => {
    const runId = system.runId();
    const listener = listen(
      ["--pattern", JSON.stringify({ detail: { parentRunId: [runId] } }), "--json"],
      { endpoint: shortServer.url },
    );
    await listener.ready();
    const { cursor } = (JSON.parse(listener.session.stderr) as { listening: { cursor: string } })
      .listening;
    // The server ended the first stream and the client came back.
    await expect.poll(() => listener.streams().length, { timeout: 10_000 }).toBeGreaterThan(1);
    await call(runId, "one");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(2);
    const seenOne = listener.streams().length;
    // Another stream ended after those events; the next call's come over a new one.
    await expect
      .poll(() => listener.streams().length, { timeout: 10_000 })
      .toBeGreaterThan(seenOne);
    await call(runId, "two");
    await expect.poll(() => listener.rows().length, { timeout: 10_000 }).toBe(4);
    expect(await listener.stop()).toBe(130);

    expect(
      listener.rows().map((line) => (JSON.parse(line) as { eventKey: string }).eventKey),
    ).toEqual([
      `${runId}/one/scheduled`,
      `${runId}/one/result`,
      `${runId}/two/scheduled`,
      `${runId}/two/result`,
    ]);
    // Every connection resumed from a cursor: first the one the opening read gave, then the
    // stream's own ids, never going back.
    const ids = listener.streams().map((request) => request.lastEventId ?? "");
    expect(ids[0]).toBe(cursor);
    expect(ids.every((id) => /^\d+$/.test(id))).toBe(true);
    const places = ids.map(Number);
    expect(places).toEqual([...places].sort((a, b) => a - b));
    expect(places.at(-1)).toBeGreaterThan(Number(cursor));
  });

  it("exits 1 with the API's reason for a pattern it refuses", async () => {
    const listener = listen(["--pattern", '{"detail":{"status":"failed"}}']);
    expect(await listener.exited()).toBe(1);
    expect(listener.session.stdout).toBe("");
    expect(listener.session.stderr).toContain("[400 invalid_request]");
    expect(listener.session.stderr).toContain("pattern");
  });
});

describe("toolbus listen's usage errors", () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  it.each([
    [["--pattern", "{nope"], "--pattern: not valid JSON"],
    [["--pattern", "[1]"], "--pattern: must be a JSON object"],
    [["--since", "yesterday"], "--since: an ISO date-time"],
    [["--forward-to", "ftp://example.com/hook"], "--forward-to: an http(s) URL"],
    [["--forward-to", "localhost:3000"], "--forward-to: an http(s) URL"],
    [
      ["--forward-to", "http://127.0.0.1:3000/hook", "--secret", "whsec_short"],
      "--secret: must be whsec_ followed by the base64 of 24 to 64 bytes",
    ],
    [["--secret", secret], "--secret signs what --forward-to sends: give --forward-to too"],
    [["extra"], "Unexpected argument: extra."],
  ])("exits 2 for %j: %s", async (argv, message) => {
    const listener = listen(argv);
    expect(await listener.exited()).toBe(2);
    expect(listener.session.stderr).toMatch(/^toolbus: /);
    expect(listener.session.stderr).toContain(message);
    expect(listener.session.stderr).toContain("Usage: toolbus listen [--pattern '<json>']");
    expect(listener.session.stdout).toBe("");
    expect(listener.session.requests).toEqual([]);
  });
});
