import { builtinCapabilities, builtinTools, builtinToolsets } from "@toolbus/tools";
import { githubApi, githubToolset } from "@toolbus/tools/github";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  fixture,
  type Route,
  sendJson,
  startUpstream,
  type Upstream,
} from "../packages/tools/src/web-search/testing";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

const TOKEN = "ghp_e2eTOKEN9f8e7d6c5b4a3210fedcba";
const REPO = "/repos/octocat/Hello-World";

// builtinTools already lists github_api: registering it twice would be refused.
const tools = [...builtinTools.filter((t) => t.spec.id !== githubApi.spec.id), githubApi];
const toolsets = [...builtinToolsets.filter((t) => t.name !== githubToolset.name), githubToolset];

interface CallView {
  parentRunId: string;
  callId: string;
  toolId: string;
  toolset: string;
  status: string;
  result: {
    output: string;
    data: Record<string, unknown>;
    citations: { url: string; title?: string }[];
    cached: boolean;
    failure?: { kind: string; message: string; retryAfterMs?: number; recovery: string };
  };
}

interface EventView {
  detailType: string;
  detail: Record<string, unknown>;
}

let upstream: Upstream;
let route: Route;

const github: Route = (request, response) => {
  const path = request.url.pathname;
  if (request.headers.authorization !== `Bearer ${TOKEN}`) {
    return sendJson(response, { message: "Bad credentials" }, 401);
  }
  if (path === `${REPO}/issues/1348`) return sendJson(response, fixture("github_api", "pull.json"));
  if (path === `${REPO}/readme`) return sendJson(response, fixture("github_api", "readme.json"));
  return sendJson(response, { message: "Not Found" }, 404);
};

beforeAll(async () => {
  upstream = await startUpstream((request, response) => route(request, response));
});
afterAll(() => upstream.close());
beforeEach(() => {
  route = github;
});

function start(secrets: Record<string, string>) {
  return startTestToolbus({
    tools,
    toolsets,
    capabilities: builtinCapabilities,
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      tools: { github_api: { baseUrl: upstream.origin } },
    },
    secrets,
  });
}

async function call(system: TestToolbus, input: unknown) {
  const runId = system.runId();
  const response = await system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "github_api", input, wait: 15 },
  });
  return { response, runId };
}

describe("github_api through the API, with GITHUB_TOKEN set", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await start({ GITHUB_TOKEN: TOKEN });
  });
  afterAll(() => system.stop());

  it("reads a pull request and announces both events, never showing the token", async () => {
    const before = upstream.requests.length;
    const input = { action: "get_issue", owner: "octocat", repo: "Hello-World", number: 1348 };
    const { response, runId } = await call(system, input);
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view).toMatchObject({
      parentRunId: runId,
      toolId: "github_api",
      toolset: "github",
      status: "succeeded",
      result: {
        cached: false,
        data: { action: "get_issue", kind: "pull_request", merged: true, number: 1348 },
        citations: [{ url: "https://github.com/octocat/Hello-World/pull/1348" }],
      },
    });
    expect(view.result.output).toMatch(/^Pull request octocat\/Hello-World#1348/);
    expect(upstream.requests.length - before).toBe(1);

    const seen = await system.events<EventView>(runId);
    expect(seen.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    expect(seen[0]?.detail).toMatchObject({ toolId: "github_api", input });
    expect(seen[1]?.detail).toMatchObject({ callId: view.callId, status: "succeeded" });
    const capabilities = await (await system.request("/v1/capabilities")).text();
    for (const text of [JSON.stringify(view), JSON.stringify(seen), capabilities]) {
      expect(text).not.toContain(TOKEN);
    }
  });

  it("serves a repeated read from the cache: GitHub is asked once", async () => {
    const input = { action: "get_readme", owner: "octocat", repo: "Hello-World" };
    await call(system, input);
    const before = upstream.requests.length;
    const { response, runId } = await call(system, input);
    const view = (await response.json()) as CallView;
    expect(view.result).toMatchObject({ cached: true, data: { action: "get_readme" } });
    expect(upstream.requests.length).toBe(before);
    const seen = await system.events<EventView>(runId);
    expect(seen.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });

  it("rejects a path that climbs out of the repository with 400", async () => {
    const { response, runId } = await call(system, {
      action: "get_file",
      owner: "octocat",
      repo: "Hello-World",
      path: "../../etc/passwd",
    });
    expect(response.status).toBe(400);
    expect(await system.events<EventView>(runId)).toEqual([]);
  });

  it("reports GitHub's exhausted rate limit as a failed result with retryAfterMs", async () => {
    route = (_, response) =>
      sendJson(response, { message: "API rate limit exceeded" }, 403, {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + 60),
      });
    const { response, runId } = await call(system, {
      action: "list_releases",
      owner: "octocat",
      repo: "Hello-World",
      limit: 1,
    });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "rate_limited", recovery: "replan" });
    expect(view.result.failure?.retryAfterMs).toBeGreaterThan(50_000);
    expect(view.result.failure?.retryAfterMs).toBeLessThanOrEqual(61_000);
    const seen = await system.events<EventView>(runId);
    expect(seen[1]?.detail).toMatchObject({ status: "failed" });
  });
});

describe("github_api through the API without GITHUB_TOKEN", () => {
  let system: TestToolbus;
  beforeAll(async () => {
    system = await start({});
  });
  afterAll(() => system.stop());

  it("fails as unavailable with the reason and never reaches GitHub", async () => {
    const before = upstream.requests.length;
    const { response, runId } = await call(system, {
      action: "get_readme",
      owner: "octocat",
      repo: "Spoon-Knife",
    });
    expect(response.status).toBe(200);
    const view = (await response.json()) as CallView;
    expect(view.status).toBe("failed");
    expect(view.result.failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
    expect(view.result.failure?.message).toContain("GITHUB_TOKEN is not set");
    expect(upstream.requests.length).toBe(before);
    const seen = await system.events<EventView>(runId);
    expect(seen.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });
});
