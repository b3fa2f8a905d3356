import { ToolFailure, toolSpecOf } from "@toolbus/core/tool-definition";
import type { Failure } from "@toolbus/wire/model";
import { toolSpec } from "@toolbus/wire/model";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  fixture,
  loopbackContext,
  type RecordedRequest,
  type Route,
  sendJson,
  startUpstream,
  type Upstream,
} from "../web-search/testing";
import { githubApi } from "./github-api";
import { githubInput, githubOutput } from "./schemas";
import { type GitHubSettings, githubSettings } from "./settings";

const TOKEN = "ghp_TESTtoken0123456789abcdefABCDEF";
const NOW = new Date("2026-03-01T12:00:00Z");
const REPO = "/repos/octocat/Hello-World";

let upstream: Upstream;
let route: Route;

/** GitHub as the fixtures describe it, for the paths the tests use. */
const github: Route = (request, response) => {
  const path = request.url.pathname;
  const json = (name: string) => sendJson(response, fixture("github_api", name));
  if (path === `${REPO}/contents/src/greet.ts`) return json("contents-file.json");
  if (path === `${REPO}/contents/src`) return json("contents-dir.json");
  if (path === `${REPO}/contents/docs/logo.png`) return json("contents-binary.json");
  if (path === `${REPO}/contents/data/dataset.csv`) return json("contents-large.json");
  if (path === `${REPO}/readme`) return json("readme.json");
  if (path === `${REPO}/releases`) return json("releases.json");
  if (path === `${REPO}/issues/1347`) return json("issue.json");
  if (path === `${REPO}/issues/1348`) return json("pull.json");
  if (path === "/search/code") return json("search-code.json");
  return sendJson(
    response,
    { message: "Not Found", documentation_url: "https://docs.github.com/rest", status: "404" },
    404,
  );
};

beforeAll(async () => {
  upstream = await startUpstream((request, response) => route(request, response));
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.requests.length = 0;
  route = github;
});

function settings(overrides: Record<string, unknown> = {}): GitHubSettings {
  return githubSettings.parse({ baseUrl: upstream.origin, ...overrides });
}

async function call(
  input: unknown,
  overrides: Record<string, unknown> = {},
  options: Parameters<typeof loopbackContext>[1] = {},
) {
  const result = await githubApi.execute(
    githubInput.parse(input),
    loopbackContext(settings(overrides), {
      secrets: { GITHUB_TOKEN: TOKEN },
      now: () => NOW,
      ...options,
    }),
  );
  expect(JSON.stringify(result)).not.toContain(TOKEN);
  expect(githubOutput.safeParse(result.data).success).toBe(true);
  return result;
}

async function failureOf(run: Promise<unknown>): Promise<Failure> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ToolFailure) {
      const shown = JSON.stringify({ error, failure: error.failure, cause: String(error.cause) });
      expect(shown).not.toContain(TOKEN);
      return error.failure;
    }
    throw error;
  }
  throw new Error("expected the call to fail");
}

function only(requests: RecordedRequest[]): RecordedRequest {
  expect(requests).toHaveLength(1);
  return requests[0] as RecordedRequest;
}

describe("github_api requests", () => {
  it("authenticates with the token as a Bearer and pins the API version", async () => {
    await call({ action: "get_readme", owner: "octocat", repo: "Hello-World" });
    const request = only(upstream.requests);
    expect(request.method).toBe("GET");
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers.accept).toBe("application/vnd.github+json");
    expect(request.headers["x-github-api-version"]).toBe("2022-11-28");
  });

  it("works under a GitHub Enterprise base URL with a path", async () => {
    route = (request, response) => {
      const url = new URL(request.url.href.replace("/api/v3/", "/"));
      return github({ ...request, url }, response);
    };
    const { data } = await call(
      { action: "list_releases", owner: "octocat", repo: "Hello-World" },
      { baseUrl: `${upstream.origin}/api/v3/` },
    );
    expect(data).toMatchObject({ action: "list_releases" });
    expect(upstream.requests[0]?.url.pathname).toBe("/api/v3/repos/octocat/Hello-World/releases");
  });

  it("fails as unavailable without a token, before sending anything", async () => {
    const failure = await failureOf(
      call({ action: "get_readme", owner: "octocat", repo: "Hello-World" }, {}, { secrets: {} }),
    );
    expect(failure).toEqual({
      kind: "unavailable",
      message: "github_api needs the secret GITHUB_TOKEN, which is not set on this stage.",
      retryable: false,
      recovery: "replan",
    });
    expect(upstream.requests).toHaveLength(0);
  });
});

describe("get_file", () => {
  it("returns the decoded text with its metadata, ref and link", async () => {
    const { data, output, citations } = await call({
      action: "get_file",
      owner: "octocat",
      repo: "Hello-World",
      path: "src/greet.ts",
      ref: "main",
    });
    expect(only(upstream.requests).url.search).toBe("?ref=main");
    expect(data).toMatchObject({
      action: "get_file",
      owner: "octocat",
      repo: "Hello-World",
      path: "src/greet.ts",
      name: "greet.ts",
      ref: "main",
      sha: "3d21ec53a331a6f037a91c368710b99387d012c1",
      url: "https://github.com/octocat/Hello-World/blob/main/src/greet.ts",
      binary: false,
    });
    expect(data.action === "get_file" && data.content).toContain(
      "export function greet(input: unknown): string {",
    );
    expect(data.action === "get_file" && data.size).toBe(
      Buffer.byteLength(data.action === "get_file" ? (data.content ?? "") : ""),
    );
    expect(citations).toEqual([
      {
        title: "octocat/Hello-World: src/greet.ts",
        url: "https://github.com/octocat/Hello-World/blob/main/src/greet.ts",
      },
    ]);
    // The file holds a ``` run, so the fence around it is longer.
    expect(output).toMatch(
      /^octocat\/Hello-World: src\/greet\.ts \(src\/greet\.ts, \d+ bytes, ref main\) — https:\/\/github\.com\/\S+\n\n````\nimport/,
    );
    expect(output.endsWith("}\n````")).toBe(true);
  });

  it("escapes path segments in the URL", async () => {
    route = (_, response) => sendJson(response, { message: "Not Found" }, 404);
    await failureOf(
      call({ action: "get_file", owner: "octocat", repo: "Hello-World", path: "docs/a b/#1.md" }),
    );
    expect(upstream.requests[0]?.url.pathname).toBe(`${REPO}/contents/docs/a%20b/%231.md`);
  });

  it("returns only metadata for a binary file and says it is binary", async () => {
    const { data, output } = await call({
      action: "get_file",
      owner: "octocat",
      repo: "Hello-World",
      path: "docs/logo.png",
    });
    expect(data).toMatchObject({ action: "get_file", binary: true, size: 33, name: "logo.png" });
    expect("content" in data).toBe(false);
    expect(output).toContain("This is a binary file; its content is not returned");
  });

  it("refuses a directory and lists what it holds", async () => {
    const failure = await failureOf(
      call({ action: "get_file", owner: "octocat", repo: "Hello-World", path: "src" }),
    );
    expect(failure).toEqual({
      kind: "upstream_error",
      message:
        "src in octocat/Hello-World is a directory, not a file. It holds: greet.ts, internal/, " +
        "index.ts. Ask for one file inside it.",
      retryable: false,
      recovery: "correct_call",
    });
  });

  it("refuses a file over maxFileBytes, naming the size and the setting", async () => {
    const failure = await failureOf(
      call(
        { action: "get_file", owner: "octocat", repo: "Hello-World", path: "src/greet.ts" },
        {
          maxFileBytes: 100,
        },
      ),
    );
    expect(failure).toMatchObject({ kind: "upstream_error", recovery: "correct_call" });
    expect(failure.message).toMatch(
      /^src\/greet\.ts in octocat\/Hello-World is \d+ bytes, more than the 100 bytes/,
    );
    expect(failure.message).toContain("tools.github_api.maxFileBytes");
  });

  it("refuses a file over 1 MB by default without downloading it", async () => {
    const failure = await failureOf(
      call({ action: "get_file", owner: "octocat", repo: "Hello-World", path: "data/dataset.csv" }),
    );
    expect(failure.message).toContain("is 5242880 bytes, more than the 1048576 bytes");
    expect(upstream.requests).toHaveLength(1);
  });

  it("fetches the raw bytes of a file the contents API sends without content", async () => {
    const csv = "id,name\n".repeat(200_000);
    route = (request, response) => {
      if (request.headers.accept === "application/vnd.github.raw+json") {
        response.writeHead(200, { "content-type": "application/vnd.github.raw+json" });
        response.end(csv);
        return;
      }
      const entry = JSON.parse(fixture("github_api", "contents-large.json"));
      sendJson(response, { ...entry, size: csv.length });
    };
    const { data } = await call(
      { action: "get_file", owner: "octocat", repo: "Hello-World", path: "data/dataset.csv" },
      { maxFileBytes: 2 * 1024 * 1024 },
    );
    expect(upstream.requests.map((r) => r.headers.accept)).toEqual([
      "application/vnd.github+json",
      "application/vnd.github.raw+json",
    ]);
    expect(data.action === "get_file" && data.content).toBe(csv);
  });

  it("says what a symlink points to and what a submodule is", async () => {
    route = (_, response) =>
      sendJson(response, {
        type: "symlink",
        target: "/etc/hosts",
        size: 10,
        name: "hosts",
        path: "hosts",
        sha: "a".repeat(40),
        html_url: "https://github.com/octocat/Hello-World/blob/main/hosts",
      });
    const link = await failureOf(
      call({ action: "get_file", owner: "octocat", repo: "Hello-World", path: "hosts" }),
    );
    expect(link).toMatchObject({ recovery: "correct_call" });
    expect(link.message).toContain("is a symbolic link to /etc/hosts");

    route = (_, response) =>
      sendJson(response, {
        type: "submodule",
        submodule_git_url: "git://github.com/jquery/qunit.git",
        size: 0,
        name: "qunit",
        path: "test/qunit",
        sha: "6ca3721222109997540bd6d9ccd396902e0ad2f9",
      });
    const submodule = await failureOf(
      call({ action: "get_file", owner: "octocat", repo: "Hello-World", path: "test/qunit" }),
    );
    expect(submodule.message).toContain("is a git submodule (git://github.com/jquery/qunit.git)");
  });

  it("turns a 404 into a call to correct, naming what was missing", async () => {
    const failure = await failureOf(
      call({
        action: "get_file",
        owner: "octocat",
        repo: "Hello-World",
        path: "nope.md",
        ref: "v9",
      }),
    );
    expect(failure).toEqual({
      kind: "upstream_error",
      message:
        "GitHub has no file nope.md in octocat/Hello-World at v9, or the repository is not " +
        "visible to this stage's token (GitHub answered 404).",
      retryable: false,
      recovery: "correct_call",
    });
  });

  it("fails as unreadable when the content is not base64", async () => {
    route = (_, response) => {
      const entry = JSON.parse(fixture("github_api", "contents-file.json"));
      sendJson(response, { ...entry, content: "%%% not base64 %%%" });
    };
    const failure = await failureOf(
      call({ action: "get_file", owner: "octocat", repo: "Hello-World", path: "src/greet.ts" }),
    );
    expect(failure.message).toBe("GitHub returned a response Toolbus could not read.");
  });
});

describe("get_readme", () => {
  it("returns the README's text and link, at a ref when asked", async () => {
    const { data, output, citations } = await call({
      action: "get_readme",
      owner: "octocat",
      repo: "Hello-World",
      ref: "v1.0.0",
    });
    expect(only(upstream.requests).url.search).toBe("?ref=v1.0.0");
    expect(data).toEqual({
      action: "get_readme",
      owner: "octocat",
      repo: "Hello-World",
      path: "README.md",
      name: "README.md",
      ref: "v1.0.0",
      sha: "980a0d5f19a64b4b30a87d4206aade58726b60e3",
      size: 46,
      url: "https://github.com/octocat/Hello-World/blob/master/README.md",
      binary: false,
      content: "# Hello-World\n\nMy first repository on GitHub!\n",
    });
    expect(output).toBe(
      "README of octocat/Hello-World (README.md, 46 bytes, ref v1.0.0) — " +
        "https://github.com/octocat/Hello-World/blob/master/README.md\n\n" +
        "```\n# Hello-World\n\nMy first repository on GitHub!\n```",
    );
    expect(citations).toEqual([
      {
        title: "README of octocat/Hello-World",
        url: "https://github.com/octocat/Hello-World/blob/master/README.md",
      },
    ]);
  });
});

describe("list_releases", () => {
  it("returns the latest releases, newest first, with one citation each", async () => {
    const { data, output, citations } = await call({
      action: "list_releases",
      owner: "octocat",
      repo: "Hello-World",
      limit: 2,
    });
    expect(only(upstream.requests).url.search).toBe("?per_page=2");
    expect(data.action === "list_releases" && data.releases).toEqual([
      {
        tag: "v2.0.0-rc.1",
        name: "v2.0.0 release candidate",
        url: "https://github.com/octocat/Hello-World/releases/tag/v2.0.0-rc.1",
        draft: false,
        prerelease: true,
        publishedAt: "2013-03-02T19:01:12Z",
        author: "octocat",
        notes:
          "## Breaking changes\n\n- `greet` now refuses empty names.\n\n## Features\n\n- Greetings in 12 languages.",
        notesTruncated: false,
      },
      {
        tag: "v1.0.0",
        name: "v1.0.0",
        url: "https://github.com/octocat/Hello-World/releases/tag/v1.0.0",
        draft: false,
        prerelease: false,
        publishedAt: "2013-02-27T19:35:32Z",
        author: "octocat",
        notes: "Description of the release",
        notesTruncated: false,
      },
    ]);
    expect(output).toBe(
      [
        "Latest 2 releases of octocat/Hello-World, newest first:",
        '- v2.0.0-rc.1 "v2.0.0 release candidate" — published 2013-03-02 (prerelease) — ' +
          "https://github.com/octocat/Hello-World/releases/tag/v2.0.0-rc.1",
        "  ## Breaking changes - `greet` now refuses empty names. ## Features - Greetings in 12 languages.",
        "- v1.0.0 — published 2013-02-27 — https://github.com/octocat/Hello-World/releases/tag/v1.0.0",
        "  Description of the release",
      ].join("\n"),
    );
    expect(citations?.map((c) => c.url)).toEqual([
      "https://github.com/octocat/Hello-World/releases/tag/v2.0.0-rc.1",
      "https://github.com/octocat/Hello-World/releases/tag/v1.0.0",
    ]);
  });

  it("says so when a repository has no releases", async () => {
    route = (_, response) => sendJson(response, []);
    const { data, output, citations } = await call({
      action: "list_releases",
      owner: "octocat",
      repo: "Hello-World",
    });
    expect(data).toEqual({
      action: "list_releases",
      owner: "octocat",
      repo: "Hello-World",
      releases: [],
    });
    expect(output).toBe("octocat/Hello-World has no published releases.");
    expect(citations).toEqual([]);
    expect(upstream.requests[0]?.url.search).toBe("?per_page=10");
  });

  it("shortens long release notes and says it did", async () => {
    route = (_, response) => {
      const [release] = JSON.parse(fixture("github_api", "releases.json"));
      sendJson(response, [{ ...release, body: "x".repeat(10_000) }]);
    };
    const { data } = await call({ action: "list_releases", owner: "octocat", repo: "Hello-World" });
    const [release] = data.action === "list_releases" ? data.releases : [];
    expect(release?.notes).toHaveLength(2_000);
    expect(release?.notesTruncated).toBe(true);
  });
});

describe("get_issue", () => {
  it("returns an issue, saying it is an issue", async () => {
    const { data, output, citations } = await call({
      action: "get_issue",
      owner: "octocat",
      repo: "Hello-World",
      number: 1347,
    });
    expect(data).toEqual({
      action: "get_issue",
      owner: "octocat",
      repo: "Hello-World",
      number: 1347,
      kind: "issue",
      title: "Found a bug",
      state: "closed",
      stateReason: "completed",
      author: "octocat",
      labels: ["bug", "good first issue"],
      comments: 3,
      createdAt: "2011-04-22T13:33:48Z",
      updatedAt: "2011-04-23T10:12:00Z",
      closedAt: "2011-04-23T10:12:00Z",
      url: "https://github.com/octocat/Hello-World/issues/1347",
      body: "I'm having a problem with this.\n\nSteps:\n1. Run `greet({})`\n2. See the error",
      bodyTruncated: false,
    });
    expect(output.split("\n").slice(0, 4)).toEqual([
      "Issue octocat/Hello-World#1347: Found a bug",
      "State: closed, completed · by @octocat · 3 comments · labels: bug, good first issue",
      "Opened 2011-04-22, updated 2011-04-23, closed 2011-04-23",
      "https://github.com/octocat/Hello-World/issues/1347",
    ]);
    expect(citations).toEqual([
      {
        title: "octocat/Hello-World#1347: Found a bug",
        url: "https://github.com/octocat/Hello-World/issues/1347",
      },
    ]);
  });

  it("returns a pull request, saying it is one and whether it was merged", async () => {
    const { data, output } = await call({
      action: "get_issue",
      owner: "octocat",
      repo: "Hello-World",
      number: 1348,
    });
    expect(data).toMatchObject({
      kind: "pull_request",
      merged: true,
      draft: false,
      body: "",
      author: "hubot",
      url: "https://github.com/octocat/Hello-World/pull/1348",
    });
    expect(output).toContain(
      "Pull request octocat/Hello-World#1348: Fix the greeting for empty names",
    );
    expect(output).toContain("State: closed, merged · by @hubot · 1 comment");
    expect(output).toContain("(No description.)");
  });

  it("names the missing issue on a 404 and a deleted one on a 410", async () => {
    const missing = await failureOf(
      call({ action: "get_issue", owner: "octocat", repo: "Hello-World", number: 99 }),
    );
    expect(missing.message).toBe(
      "GitHub has no issue or pull request #99 in octocat/Hello-World, or it is not visible to " +
        "this stage's token (GitHub answered 404).",
    );
    route = (_, response) => sendJson(response, { message: "This issue was deleted" }, 410);
    const gone = await failureOf(
      call({ action: "get_issue", owner: "octocat", repo: "Hello-World", number: 7 }),
    );
    expect(gone).toMatchObject({ kind: "upstream_error", recovery: "correct_call" });
  });
});

describe("search_code", () => {
  it("asks for text matches and returns items with their fragments", async () => {
    const { data, output, citations } = await call({
      action: "search_code",
      query: "addClass repo:jquery/jquery",
      limit: 5,
    });
    const request = only(upstream.requests);
    expect(request.headers.accept).toBe("application/vnd.github.text-match+json");
    expect(Object.fromEntries(request.url.searchParams)).toEqual({
      q: "addClass repo:jquery/jquery",
      per_page: "5",
    });
    expect(data).toMatchObject({
      action: "search_code",
      query: "addClass repo:jquery/jquery",
      totalCount: 7,
      incompleteResults: false,
    });
    expect(data.action === "search_code" && data.items[0]).toEqual({
      repository: "jquery/jquery",
      path: "src/attributes/classes.js",
      name: "classes.js",
      sha: "d7212f9dee2dcc18f084d7df8f417b80846ded5a",
      url: "https://github.com/jquery/jquery/blob/825ac3773694e0cd23ee74895fd5aeb535b27da4/src/attributes/classes.js",
      fragments: [
        "\t\t\t\t\tjQuery( this ).addClass( value.call( this, j, getClass( this ) ) );\n\t\t\t\t} );",
      ],
    });
    expect(output.split("\n")).toEqual([
      'Code search for "addClass repo:jquery/jquery": 7 matches (showing 2):',
      "1. jquery/jquery: src/attributes/classes.js — https://github.com/jquery/jquery/blob/825ac3773694e0cd23ee74895fd5aeb535b27da4/src/attributes/classes.js",
      "   jQuery( this ).addClass( value.call( this, j, getClass( this ) ) ); } );",
      "2. jquery/jquery: test/unit/classes.js — https://github.com/jquery/jquery/blob/825ac3773694e0cd23ee74895fd5aeb535b27da4/test/unit/classes.js",
    ]);
    expect(citations).toHaveLength(2);
  });

  it("passes GitHub's explanation of a query it cannot run", async () => {
    route = (_, response) =>
      sendJson(
        response,
        {
          message: "Validation Failed",
          errors: [{ resource: "Search", field: "q", code: "invalid" }],
          documentation_url: "https://docs.github.com/v3/search/",
        },
        422,
      );
    const failure = await failureOf(call({ action: "search_code", query: "repo:" }));
    expect(failure).toEqual({
      kind: "upstream_error",
      message: "GitHub could not process the request (422): Validation Failed.",
      retryable: false,
      recovery: "correct_call",
    });
  });
});

describe("github_api rate limits and credentials", () => {
  const readme = { action: "get_readme", owner: "octocat", repo: "Hello-World" };

  it("reads x-ratelimit-reset when the primary limit is used up", async () => {
    route = (_, response) =>
      sendJson(
        response,
        {
          message: "API rate limit exceeded for user ID 1.",
          documentation_url: "https://docs.github.com/rest",
        },
        403,
        {
          "x-ratelimit-limit": "5000",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-used": "5000",
          "x-ratelimit-reset": String(NOW.getTime() / 1000 + 90),
          "x-ratelimit-resource": "core",
        },
      );
    expect(await failureOf(call(readme))).toEqual({
      kind: "rate_limited",
      message: "GitHub's rate limit for this stage's token is used up.",
      retryable: true,
      recovery: "replan",
      retryAfterMs: 90_000,
    });
  });

  it("prefers Retry-After on a secondary limit", async () => {
    route = (_, response) =>
      sendJson(
        response,
        {
          message:
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        },
        403,
        { "retry-after": "45", "x-ratelimit-remaining": "4000" },
      );
    expect(await failureOf(call(readme))).toMatchObject({
      kind: "rate_limited",
      retryAfterMs: 45_000,
    });
  });

  it("waits a minute on a secondary limit that names no time", async () => {
    route = (_, response) =>
      sendJson(response, { message: "You have exceeded a secondary rate limit." }, 403);
    expect(await failureOf(call(readme))).toMatchObject({
      kind: "rate_limited",
      retryAfterMs: 60_000,
    });
  });

  it("reads a 429 with Retry-After as rate limited", async () => {
    route = (_, response) =>
      sendJson(response, { message: "Too Many Requests" }, 429, { "retry-after": "120" });
    expect(await failureOf(call(readme))).toMatchObject({
      kind: "rate_limited",
      retryAfterMs: 120_000,
      retryable: true,
    });
  });

  it("reads a plain 403 as missing permission, and a 401 as a bad token", async () => {
    route = (_, response) =>
      sendJson(response, { message: "Resource not accessible by personal access token" }, 403);
    expect(await failureOf(call(readme))).toMatchObject({
      kind: "unavailable",
      recovery: "replan",
    });

    route = (_, response) => sendJson(response, { message: "Bad credentials" }, 401);
    expect(await failureOf(call(readme))).toEqual({
      kind: "unavailable",
      message: "GitHub rejected GITHUB_TOKEN (401): it is wrong, expired or revoked.",
      retryable: false,
      recovery: "replan",
    });
  });
});

describe("github_api when the upstream misbehaves", () => {
  const issue = { action: "get_issue", owner: "octocat", repo: "Hello-World", number: 1347 };

  it("fails as a timeout when GitHub never answers", async () => {
    route = () => undefined;
    const failure = await failureOf(call(issue, {}, { outbound: { defaultTimeoutMs: 200 } }));
    expect(failure).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("fails as a timeout when the tool's own timeout fires", async () => {
    route = () => undefined;
    const failure = await failureOf(call(issue, {}, { signal: AbortSignal.timeout(150) }));
    expect(failure.kind).toBe("timeout");
  });

  it("fails as a retryable upstream error after repeated 500s", async () => {
    route = (_, response) => sendJson(response, { message: "Server Error" }, 500);
    const failure = await failureOf(call(issue));
    expect(failure).toMatchObject({ kind: "upstream_error", retryable: true, recovery: "replan" });
    expect(upstream.requests).toHaveLength(3);
  });

  it.each([
    ["not JSON", "<html>Unicorn!</html>"],
    ["JSON of another shape", { id: 1, state: "open" }],
  ])("fails as unreadable on a body that is %s", async (_, body) => {
    route = (_, response) => sendJson(response, body);
    const failure = await failureOf(call(issue));
    expect(failure).toEqual({
      kind: "upstream_error",
      message: "GitHub returned a response Toolbus could not read.",
      retryable: true,
      recovery: "replan",
    });
  });

  it("refuses a body over its size cap", async () => {
    route = (_, response) => {
      const body = JSON.parse(fixture("github_api", "issue.json"));
      sendJson(response, { ...body, body: "x".repeat(3 * 1024 * 1024) });
    };
    const failure = await failureOf(call(issue));
    expect(failure).toMatchObject({ kind: "upstream_error", retryable: false });
    expect(failure.message).toMatch(/larger than allowed/);
  });

  it("stops a redirect loop", async () => {
    route = (request, response) => {
      response.writeHead(301, {
        location: `${request.url.pathname}?hop=${upstream.requests.length}`,
      });
      response.end();
    };
    const failure = await failureOf(call(issue));
    expect(failure).toMatchObject({ kind: "upstream_error", retryable: false });
    expect(failure.message).toMatch(/redirected too many times/);
  });

  it("refuses a redirect to a private address", async () => {
    route = (_, response) => {
      response.writeHead(302, {
        location: "http://10.0.0.1/repos/octocat/Hello-World/issues/1347",
      });
      response.end();
    };
    const failure = await failureOf(call(issue));
    expect(failure).toMatchObject({ kind: "unavailable", retryable: false });
    expect(upstream.requests).toHaveLength(1);
  });

  it("follows a moved repository within GitHub but never takes the token to another origin", async () => {
    const elsewhere = await startUpstream((request, response) => github(request, response));
    try {
      route = (request, response) => {
        // localhost resolves to the allowed loopback address but is another origin.
        const target = elsewhere.origin.replace("127.0.0.1", "localhost");
        response.writeHead(301, { location: `${target}${request.url.pathname}` });
        response.end();
      };
      const { data } = await call(issue);
      expect(data).toMatchObject({ action: "get_issue", number: 1347 });
      expect(only(elsewhere.requests).headers.authorization).toBeUndefined();
    } finally {
      await elsewhere.close();
    }
  });
});

describe("settings schema", () => {
  it("defaults to api.github.com and a 1 MB file cap", () => {
    expect(githubSettings.parse({})).toEqual({
      baseUrl: "https://api.github.com",
      maxFileBytes: 1_048_576,
    });
  });

  it("rejects non-web URLs, bad caps and unknown fields", () => {
    for (const bad of [
      { baseUrl: "github.com" },
      { baseUrl: "file:///etc" },
      { maxFileBytes: 0 },
      { maxFileBytes: 1.5 },
      { token: "x" },
    ]) {
      expect(githubSettings.safeParse(bad).success).toBe(false);
    }
  });
});

describe("input schema", () => {
  it("fills defaults per action", () => {
    expect(githubInput.parse({ action: "list_releases", owner: "a", repo: "b" })).toEqual({
      action: "list_releases",
      owner: "a",
      repo: "b",
      limit: 10,
    });
    expect(githubInput.parse({ action: "search_code", query: " x " })).toEqual({
      action: "search_code",
      query: "x",
      limit: 10,
    });
  });

  it.each([
    ["an unknown action", { action: "delete_repo", owner: "a", repo: "b" }],
    ["path traversal", { action: "get_file", owner: "a", repo: "b", path: "../../etc/passwd" }],
    ["an absolute path", { action: "get_file", owner: "a", repo: "b", path: "/etc/passwd" }],
    ["a bad owner", { action: "get_readme", owner: "-bad-", repo: "b" }],
    ["an owner with a slash", { action: "get_readme", owner: "a/b", repo: "c" }],
    ["a bad ref", { action: "get_readme", owner: "a", repo: "b", ref: "main..dev" }],
    ["a missing path", { action: "get_file", owner: "a", repo: "b" }],
    ["fields of another action", { action: "get_readme", owner: "a", repo: "b", path: "x" }],
    ["a limit of 31", { action: "list_releases", owner: "a", repo: "b", limit: 31 }],
    ["issue number 0", { action: "get_issue", owner: "a", repo: "b", number: 0 }],
    ["a long query", { action: "search_code", query: "q".repeat(257) }],
  ])("rejects %s", (_, input) => {
    expect(githubInput.safeParse(input).success).toBe(false);
  });

  it("accepts every example in the spec", () => {
    const examples = githubApi.spec.examples ?? [];
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) {
      expect(githubInput.safeParse(example.input).success).toBe(true);
    }
  });
});

it("publishes a valid catalog spec with an object input schema", () => {
  const spec = toolSpecOf(githubApi);
  expect(toolSpec.parse(spec)).toEqual(spec);
  expect(spec).toMatchObject({
    id: "github_api",
    toolset: "github",
    category: "reference",
    requires: ["github_token", "network"],
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    cache: { ttlSeconds: 300 },
    version: "1",
  });
  expect(spec.setup.find((s) => s.name === "GITHUB_TOKEN")).toMatchObject({
    secret: "GITHUB_TOKEN",
    required: true,
  });
  expect(spec.inputSchema.type).toBe("object");
  expect(spec.inputSchema.oneOf).toHaveLength(5);
});
