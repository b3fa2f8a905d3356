import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createToolbusClient } from "@toolbus/client";
import { COMMANDS, runCli } from "@toolbus/client/cli";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { type ApiServer, serveApi } from "@toolbus/local";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// `toolbus subscriptions ...` against the real API over HTTP, in this process, with a real
// webhook receiver on loopback.

let system: TestToolbus;
let server: ApiServer;
let receiver: Upstream;
let scratch: string;
let aliceKey: string;
let bobKey: string;
/** Paths the receiver answers 500 on, with a Retry-After past the retry window. */
const down = new Set<string>();

beforeAll(async () => {
  receiver = await startUpstream((request, response) => {
    if (down.has(request.url.pathname)) {
      response.writeHead(500, { "retry-after": "120" }).end("down for the test");
    } else response.writeHead(204).end();
  });
  system = await startTestToolbus({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      // The window (36 s) is shorter than the receiver's Retry-After (120 s): a failed first
      // attempt cannot be retried inside it, so it is a dead letter at once. Two failures in
      // a row pause a subscription as failing.
      subscriptions: { retryWindowHours: 0.01, pauseAfterFailures: 2 },
    },
  });
  server = await serveApi(system.app, { port: 0 });
  scratch = await mkdtemp(join(tmpdir(), "toolbus-cli-subscriptions-"));
  const admin = createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
  aliceKey = (await admin.keys.create({ name: "alice", role: "member" })).key;
  bobKey = (await admin.keys.create({ name: "bob", role: "member" })).key;
}, 60_000);

afterAll(async () => {
  await server?.close();
  await system?.stop();
  await receiver?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

async function toolbus(argv: string[], options: { key?: string; stdin?: string } = {}) {
  let stdout = "";
  let stderr = "";
  let requests = 0;
  const stdin = options.stdin;
  const code = await runCli([...argv, "--endpoint", server.url], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: (async function* () {
      if (stdin !== undefined) yield stdin;
    })(),
    env: { TOOLBUS_API_KEY: options.key ?? system.adminKey },
    cwd: scratch,
    fetch: (input, init) => {
      requests++;
      return fetch(input, init);
    },
  });
  return { code, stdout, stderr, requests };
}

/** Creates a webhook subscription to the run's events and returns its id and secret. */
async function subscribe(
  runId: string,
  path: string,
  options: { key?: string; detailType?: string } = {},
) {
  const pattern = {
    ...(options.detailType ? { "detail-type": [options.detailType] } : {}),
    detail: { parentRunId: [runId] },
  };
  const run = await toolbus(
    [
      "subscriptions",
      "create",
      "--name",
      `for ${path}`,
      "--pattern",
      JSON.stringify(pattern),
      "--webhook",
      `${receiver.origin}${path}`,
      "--json",
    ],
    options.key ? { key: options.key } : {},
  );
  expect(run, run.stderr).toMatchObject({ code: 0, stderr: "" });
  const created = JSON.parse(run.stdout) as { subscription: { id: string }; secret: string };
  return { id: created.subscription.id, secret: created.secret };
}

async function call(runId: string) {
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: "Hi there." }, wait: 10 },
  });
  expect(response.status).toBe(200);
  await system.settle();
}

const received = (path: string) =>
  receiver.requests.filter((request) => request.url.pathname === path);

const headersOf = (request: Upstream["requests"][number]) =>
  Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));

describe("toolbus subscriptions create / show / list", () => {
  it("prints the subscription and its secret once, and the secret signs the deliveries", async () => {
    const runId = system.runId();
    const pattern = JSON.stringify({ detail: { parentRunId: [runId] } });
    const url = `${receiver.origin}/created`;
    const run = await toolbus([
      "subscriptions",
      "create",
      "--name",
      "results",
      "--pattern",
      pattern,
      "--webhook",
      url,
    ]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(/^Subscription: +sub_[0-9a-f]{24}$/m);
    expect(run.stdout).toMatch(new RegExp(`^Target: +webhook ${url}$`, "m"));
    expect(run.stdout).toMatch(/^Status: +active$/m);
    expect(run.stdout).toContain("it will not be shown again");
    const secrets = run.stdout.match(/whsec_[A-Za-z0-9+/]+=*/g) ?? [];
    expect(secrets).toHaveLength(1);
    const [secret = ""] = secrets;
    expect(run.stdout).toMatch(new RegExp(`^Secret: +${secret.replace(/[+/]/g, "\\$&")}$`, "m"));

    // The printed secret is the one the deliveries are signed with.
    await call(runId);
    await expect.poll(() => received("/created").length, { timeout: 10_000 }).toBe(2);
    for (const request of received("/created")) {
      expect(() => new Webhook(secret).verify(request.body, headersOf(request))).not.toThrow();
    }

    const id = /^Subscription: +(\S+)$/m.exec(run.stdout)?.[1] ?? "";
    const shown = await toolbus(["subscriptions", "show", id]);
    expect(shown).toMatchObject({ code: 0, stderr: "" });
    expect(shown.stdout).toMatch(new RegExp(`^Subscription: +${id}$`, "m"));
    expect(shown.stdout).toMatch(/^Name: +results$/m);
    expect(shown.stdout).toMatch(/^Pattern: +\{"detail":\{"parentRunId":\[/m);
    expect(shown.stdout).toMatch(/^Failure streak: +0$/m);
    // Never again: not in show, not in list.
    expect(shown.stdout).not.toContain("whsec_");
    const listed = await toolbus(["subscriptions", "list"]);
    expect(listed.stdout).toMatch(/^ID +NAME +STATUS +TARGET +FAILURE STREAK\n/);
    expect(listed.stdout).toMatch(new RegExp(`^${id} +results +active +webhook ${url} +0$`, "m"));
    expect(listed.stdout).not.toContain("whsec_");
  });

  it("prints the API's answer with --json and reads the pattern from a file or stdin", async () => {
    const runId = system.runId();
    const pattern = { "detail-type": ["ToolResultReceived"], detail: { parentRunId: [runId] } };
    await writeFile(join(scratch, "pattern.json"), JSON.stringify(pattern));
    for (const [source, stdin] of [
      ["pattern.json", undefined],
      ["-", JSON.stringify(pattern)],
    ] as const) {
      const run = await toolbus(
        [
          "subscriptions",
          "create",
          "--name",
          `from ${source}`,
          "--pattern-file",
          source,
          "--webhook",
          `${receiver.origin}/from-file`,
          "--json",
        ],
        stdin === undefined ? {} : { stdin },
      );
      expect(run).toMatchObject({ code: 0, stderr: "" });
      const created = JSON.parse(run.stdout) as {
        subscription: { name: string; pattern: string; status: string };
        secret: string;
      };
      expect(created.secret).toMatch(/^whsec_/);
      expect(created.subscription).toMatchObject({ name: `from ${source}`, status: "active" });
      expect(JSON.parse(created.subscription.pattern)).toEqual(pattern);
    }
  });

  it("rotates the secret: a new one, printed once", async () => {
    const { id, secret } = await subscribe(system.runId(), "/rotated");
    const run = await toolbus(["subscriptions", "rotate-secret", id]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    const secrets = run.stdout.match(/whsec_[A-Za-z0-9+/]+=*/g) ?? [];
    expect(secrets).toHaveLength(1);
    expect(secrets[0]).not.toBe(secret);
    expect(run.stdout).toContain("it will not be shown again");
    expect(run.stdout).toMatch(new RegExp(`^Subscription: +${id}$`, "m"));
  });

  it("exits 1 with the API's reason when it refuses the subscription", async () => {
    const run = await toolbus([
      "subscriptions",
      "create",
      "--name",
      "plain http",
      "--pattern",
      '{"source":["toolbus"]}',
      "--webhook",
      "http://example.com/hook",
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("[400");
    expect(run.stderr).toContain("https");
  });
});

describe("toolbus subscriptions pause / resume / delete", () => {
  it("pauses and resumes, as list shows, and deletes", async () => {
    const { id } = await subscribe(system.runId(), "/pausable");
    const paused = await toolbus(["subscriptions", "pause", id]);
    expect(paused).toMatchObject({ code: 0, stderr: "" });
    expect(paused.stdout).toMatch(new RegExp(`^Paused subscription ${id} \\(for /pausable\\)`));
    expect((await toolbus(["subscriptions", "list"])).stdout).toMatch(
      new RegExp(`^${id} +for /pausable +paused +webhook `, "m"),
    );
    const asJson = await toolbus(["subscriptions", "show", id, "--json"]);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      status: "paused",
      pausedBecause: "requested",
    });

    const resumed = await toolbus(["subscriptions", "resume", id]);
    expect(resumed).toMatchObject({ code: 0, stderr: "" });
    expect(resumed.stdout).toContain("active, failure streak 0");
    expect((await toolbus(["subscriptions", "list"])).stdout).toMatch(
      new RegExp(`^${id} +for /pausable +active +webhook `, "m"),
    );

    const deleted = await toolbus(["subscriptions", "delete", id]);
    expect(deleted).toEqual({
      code: 0,
      stdout: `Deleted subscription ${id}.\n`,
      stderr: "",
      requests: 1,
    });
    const gone = await toolbus(["subscriptions", "show", id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("[404");
    expect((await toolbus(["subscriptions", "list"])).stdout).not.toContain(id);
  });

  it("keeps a member out of another member's subscription: not found, exit 1", async () => {
    const { id } = await subscribe(system.runId(), "/alices", { key: aliceKey });
    expect((await toolbus(["subscriptions", "show", id], { key: aliceKey })).code).toBe(0);
    for (const argv of [
      ["subscriptions", "show", id],
      ["subscriptions", "pause", id],
      ["subscriptions", "delete", id],
      ["subscriptions", "failures", id],
    ]) {
      const run = await toolbus(argv, { key: bobKey });
      expect(run.code, argv.join(" ")).toBe(1);
      expect(run.stderr, argv.join(" ")).toContain("[404 not_found]");
      expect(run.stderr).toContain(`Subscription ${id} does not exist.`);
    }
    const bobs = await toolbus(["subscriptions", "list"], { key: bobKey });
    expect(bobs.stdout).toBe("No subscriptions yet: toolbus subscriptions create.\n");
    // Still there and still active: bob's pause and delete did nothing.
    const alices = await toolbus(["subscriptions", "list"], { key: aliceKey });
    expect(alices.stdout).toMatch(new RegExp(`^${id} +for /alices +active `, "m"));
  });
});

describe("toolbus subscriptions failures / redrive", () => {
  it("lists dead letters a page at a time and sends them again", async () => {
    const runId = system.runId();
    const path = `/down/${runId}`;
    down.add(path);
    const { id } = await subscribe(runId, path);
    await call(runId);
    // Both of the run's events (scheduled and result) failed once and died.
    const dead = async () =>
      (
        JSON.parse((await toolbus(["subscriptions", "failures", id, "--json"])).stdout) as {
          failures: Array<{ eventKey: string }>;
        }
      ).failures;
    await expect.poll(async () => (await dead()).length, { timeout: 10_000 }).toBe(2);
    const keys = (await dead()).map((letter) => letter.eventKey);

    const listed = await toolbus(["subscriptions", "list"]);
    expect(listed.stdout).toMatch(
      new RegExp(`^${id} +\\S+ +\\S+ +paused \\(failing\\) +webhook \\S+ +2$`, "m"),
    );

    const table = await toolbus(["subscriptions", "failures", id]);
    expect(table).toMatchObject({ code: 0, stderr: "" });
    expect(table.stdout).toMatch(/^EVENT KEY +TYPE +ATTEMPTS +LAST ERROR +DEAD AT\n/);
    for (const [suffix, type] of [
      ["/scheduled", "ToolCallScheduled"],
      ["/result", "ToolResultReceived"],
    ] as const) {
      const key = keys.find((candidate) => candidate.endsWith(suffix));
      expect(key, suffix).toBeDefined();
      expect(table.stdout).toMatch(
        new RegExp(
          `^${key} +${type} +1 +500 the receiver answered 500: down for the test +\\d{4}-\\d\\d-\\d\\dT\\S+Z$`,
          "m",
        ),
      );
    }

    const first = await toolbus(["subscriptions", "failures", id, "--limit", "1"]);
    expect(first.stdout.trimEnd().split("\n")).toHaveLength(2);
    const more = /^More: toolbus subscriptions failures (\S+) --limit 1 --cursor (\S+)$/m.exec(
      first.stderr,
    );
    expect(more?.[1]).toBe(id);
    const second = await toolbus([
      "subscriptions",
      "failures",
      id,
      "--limit",
      "1",
      "--cursor",
      more?.[2] ?? "",
    ]);
    expect(second.code).toBe(0);
    const pageKeys = [first.stdout, second.stdout].map(
      (page) => page.split("\n")[1]?.split(" ")[0],
    );
    expect(pageKeys.sort()).toEqual([...keys].sort());

    // The receiver is back; resumed, and one dead letter sent again by its key.
    down.delete(path);
    expect((await toolbus(["subscriptions", "resume", id])).stdout).toContain(
      "active, failure streak 0",
    );
    const [one, other] = keys;
    const redriven = await toolbus(["subscriptions", "redrive", id, "--event-key", one ?? ""]);
    expect(redriven).toMatchObject({ code: 0, stderr: "" });
    expect(redriven.stdout).toMatch(new RegExp(`^Redrove 1 dead letter of subscription ${id}:`));
    const before = received(path).length;
    await system.toolbus.subscriptions.retryDue();
    expect(received(path)).toHaveLength(before + 1);
    const sent = JSON.parse(received(path).at(-1)?.body ?? "{}") as { data: { eventKey: string } };
    expect(sent.data.eventKey).toBe(one);
    expect((await dead()).map((letter) => letter.eventKey)).toEqual([other]);

    // A key that is not a dead letter (any more) redrives nothing.
    const again = await toolbus([
      "subscriptions",
      "redrive",
      id,
      "--event-key",
      one ?? "",
      "--json",
    ]);
    expect(JSON.parse(again.stdout)).toEqual({ redriven: 0 });

    // No keys: every dead letter left.
    const all = await toolbus(["subscriptions", "redrive", id]);
    expect(all.stdout).toMatch(/^Redrove 1 dead letter /);
    await system.toolbus.subscriptions.retryDue();
    expect(received(path)).toHaveLength(before + 2);
    const empty = await toolbus(["subscriptions", "failures", id]);
    expect(empty).toMatchObject({
      code: 0,
      stdout: `No dead letters for subscription ${id}.\n`,
      stderr: "",
    });
  });
});

describe("toolbus subscriptions replay", () => {
  it("queues a run's matching events again, and they arrive marked as replays", async () => {
    const runId = system.runId();
    await call(runId);
    const { id, secret } = await subscribe(runId, "/replayed", {
      detailType: "ToolResultReceived",
    });
    expect(received("/replayed")).toEqual([]);
    const run = await toolbus(["subscriptions", "replay", id, "--run", runId]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    // The run logged two events; the pattern takes the result only.
    expect(run.stdout).toMatch(
      new RegExp(
        `^Queued 1 of run ${runId}'s 2 logged events for subscription ${id} \\(replay \\w+\\)`,
      ),
    );
    await system.toolbus.subscriptions.retryDue();
    expect(received("/replayed")).toHaveLength(1);
    const [request] = received("/replayed");
    if (!request) throw new Error("the replay was not received");
    const body = new Webhook(secret).verify(request.body, headersOf(request)) as {
      replay: boolean;
      type: string;
    };
    expect(body).toMatchObject({ replay: true, type: "ToolResultReceived" });

    const asJson = await toolbus([
      "subscriptions",
      "replay",
      id,
      "--run",
      `${runId}-none`,
      "--json",
    ]);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ queued: 0, events: 0 });
  });

  it("queues the events of a time window, and only those", async () => {
    const runId = system.runId();
    await call(runId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const from = new Date().toISOString();
    await call(runId);
    const to = new Date().toISOString();
    const { id } = await subscribe(runId, "/window", { detailType: "ToolResultReceived" });
    const run = await toolbus(["subscriptions", "replay", id, "--from", from, "--to", to]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toMatch(
      new RegExp(
        `^Queued 1 of the \\d+ events? recorded from ${from} to ${to} for subscription ${id}`,
      ),
    );
    await system.toolbus.subscriptions.retryDue();
    expect(received("/window")).toHaveLength(1);
  });
});

describe("toolbus subscriptions usage errors", () => {
  const ID = "sub_0123456789abcdef01234567";
  const HOOK = ["--webhook", "https://example.com/hook"];
  it.each([
    [["subscriptions", "show", "sub_123"], "<id>: a subscription id: sub_ and 24 hex digits"],
    [["subscriptions", "delete", "../etc"], "<id>: a subscription id: sub_ and 24 hex digits"],
    [["subscriptions", "pause"], "Missing <id>."],
    [["subscriptions", "replay", ID], "give --run <runId> or --from <iso>, not both"],
    [["subscriptions", "replay", ID, "--from", "yesterday"], "an ISO date-time"],
    [
      ["subscriptions", "replay", ID, "--to", "2026-11-24T10:00:00Z", "--run", "r1"],
      "--to needs --from",
    ],
    [["subscriptions", "create", "--pattern", "{}", ...HOOK], "--name is required"],
    [
      ["subscriptions", "create", "--name", "n", "--pattern", "{nope", ...HOOK],
      "--pattern is not valid JSON",
    ],
    [
      ["subscriptions", "create", "--name", "n", "--pattern", "[1]", ...HOOK],
      "--pattern must be a JSON object",
    ],
    [
      ["subscriptions", "create", "--name", "n", ...HOOK],
      "give --pattern or --pattern-file (one of them)",
    ],
    [
      [
        "subscriptions",
        "create",
        "--name",
        "n",
        "--pattern",
        "{}",
        "--pattern-file",
        "p.json",
        ...HOOK,
      ],
      "give --pattern or --pattern-file (one of them)",
    ],
    [
      ["subscriptions", "create", "--name", "n", "--pattern-file", "missing.json", ...HOOK],
      "missing.json does not exist.",
    ],
    [
      ["subscriptions", "create", "--name", "n", "--pattern", "{}"],
      "give one target: --webhook, --bus-arn or --queue-url",
    ],
    [
      [
        "subscriptions",
        "create",
        "--name",
        "n",
        "--pattern",
        "{}",
        ...HOOK,
        "--bus-arn",
        "arn:aws:events:us-east-1:123456789012:event-bus/b",
      ],
      "give one target: --webhook, --bus-arn or --queue-url",
    ],
    [
      ["subscriptions", "create", "--name", "n", "--pattern", "{}", "--webhook", "not a url"],
      "--webhook: an http(s) URL",
    ],
    [
      ["subscriptions", "create", "--name", "n", "--pattern", "{}", "--bus-arn", "my-bus"],
      "--bus-arn: an EventBridge bus ARN",
    ],
    [["subscriptions", "failures", ID, "--limit", "101"], "--limit is at most 100"],
    [["subscriptions", "replay", ID, "--run", "../etc"], "--run: 1-128 characters"],
    [
      ["subscriptions", "redrive", ID, "--run", "r1"],
      "--run is not an option of toolbus subscriptions redrive.",
    ],
    [["subscriptions", "unsubscribe", ID], "Unknown command: subscriptions unsubscribe."],
    [["subscriptions"], "toolbus subscriptions needs a command."],
  ])("exits 2 for %j: %s", async (argv, message) => {
    const run = await toolbus(argv);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toMatch(/^toolbus: /);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.requests).toBe(0);
  });

  it("lists every subscriptions command with toolbus subscriptions --help", async () => {
    const run = await toolbus(["subscriptions", "--help"]);
    expect(run).toMatchObject({ code: 0, stderr: "", requests: 0 });
    expect(run.stdout).toMatch(/^Usage: toolbus subscriptions <command>/);
    const commands = Object.entries(COMMANDS).filter(([name]) => name.startsWith("subscriptions "));
    expect(commands.map(([name]) => name).sort()).toEqual(
      [
        "create",
        "delete",
        "failures",
        "list",
        "pause",
        "redrive",
        "replay",
        "resume",
        "rotate-secret",
        "show",
      ].map((command) => `subscriptions ${command}`),
    );
    for (const [, command] of commands) expect(run.stdout).toContain(`toolbus ${command.usage}`);
    const create = await toolbus(["subscriptions", "create", "--help"]);
    expect(create.stdout).toContain("--pattern-file <file>");
    expect(create.stdout).toContain("--queue-url <url>");
  });
});
