import { networkCapability } from "@toolbus/core/capabilities";
import { callerConnections } from "@toolbus/core/compose/connections-on-use";
import { loadFunctionSecrets } from "@toolbus/core/deployment";
import { createHttpClient } from "@toolbus/core/outbound";
import { defineTool } from "@toolbus/core/tool-definition";
import { onFirstUse } from "@toolbus/core/util/on-first-use";
import { githubTokenCapability } from "./capability";
import { GITHUB_TOKEN } from "./request";
import { githubInput, githubOutput } from "./schemas";
import { GITHUB_API_URL, githubSettings } from "./settings";

// The operations load with the first call and are kept.
const operations = onFirstUse(() => import("./operations"));

export const githubApi = defineTool({
  spec: {
    id: "github_api",
    toolset: "github",
    title: "GitHub",
    description:
      "Reads public and token-visible GitHub data through the REST API: a file's decoded " +
      "content, a repository's README, its latest releases, one issue or pull request with " +
      "its state and description, or a code search across repositories. Each answer links " +
      "to the page on GitHub.",
    category: "reference",
    optionality: "optional",
    usageHint:
      "Use when the task names a GitHub repository, issue, pull request or release, or needs " +
      "real code from a known project: read the README or a file, check the latest version, " +
      "or look up what an issue says.",
    guidelines: {
      do: [
        "Start with get_readme or list_releases to orient yourself in an unfamiliar repository.",
        "Give the exact owner, repo and path; use search_code with repo: to find a path first.",
        "Pin ref to a tag or commit when you quote code, so the citation keeps matching.",
        "Cite the returned GitHub URL for every file, issue or release you use.",
      ],
      dont: [
        "Don't use it to write ordinary code you already know how to write.",
        "Don't page through a repository file by file; search or read the README instead.",
        "Don't retry right away after rate_limited: wait for retryAfterMs or move on.",
        "Don't assume a private repository is visible: a 404 may mean no access.",
      ],
    },
    requires: ["github_token", "network"],
    // With `connections.credentials.github_api: "user"`, each caller's own GitHub account
    // stands in for GITHUB_TOKEN (and github_token is not required).
    credentials: {
      provider: "github",
      scopes: ["repo"],
      mode: "stage",
      secret: GITHUB_TOKEN,
      capability: "github_token",
    },
    produces: ["github_content", "citations"],
    examples: [
      {
        title: "A project's README",
        input: { action: "get_readme", owner: "nodejs", repo: "node" },
      },
      {
        title: "One file at a tag",
        input: {
          action: "get_file",
          owner: "colinhacks",
          repo: "zod",
          path: "packages/zod/package.json",
          ref: "v4.0.0",
        },
      },
      {
        title: "The latest three releases",
        input: { action: "list_releases", owner: "vitest-dev", repo: "vitest", limit: 3 },
      },
      {
        title: "An issue or pull request",
        input: { action: "get_issue", owner: "microsoft", repo: "TypeScript", number: 9998 },
      },
      {
        title: "Find usages in one repository",
        input: { action: "search_code", query: "createHttpClient repo:honojs/hono", limit: 5 },
      },
    ],
    cache: { ttlSeconds: 5 * 60, staleIfErrorSeconds: 60 * 60 },
    // One token has 5,000 requests an hour; keep the stage's callers inside it together.
    rateLimit: {
      perTool: { limit: 80, windowSeconds: 60 },
      perPrincipal: { limit: 30, windowSeconds: 60 },
    },
    timeoutMs: 20_000,
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    setup: [
      {
        name: GITHUB_TOKEN,
        description:
          "A GitHub token (capability github_token). A fine-grained personal access token " +
          "with read-only Contents, Issues and Metadata permissions is enough; code search " +
          "needs a token either way. Store it as the secret GITHUB_TOKEN; it is sent only to " +
          "tools.github_api.baseUrl as a Bearer token.",
        env: GITHUB_TOKEN,
        secret: GITHUB_TOKEN,
        required: true,
      },
      {
        name: "tools.github_api.baseUrl",
        description:
          `REST API root. Default ${GITHUB_API_URL}; for GitHub Enterprise Server use ` +
          'https://<host>/api/v3, e.g. {"tools":{"github_api":{"baseUrl":' +
          '"https://github.example.com/api/v3"}}} in the stage configuration.',
        required: false,
      },
      {
        name: "tools.github_api.maxFileBytes",
        description:
          "Largest file get_file and get_readme return, in bytes (default 1048576, 1 MB). " +
          "Larger files fail with a message that names the size.",
        required: false,
      },
    ],
    version: "1",
  },
  needs: {
    detectors: [githubTokenCapability, networkCapability],
    network: createHttpClient,
    secrets: loadFunctionSecrets,
    // It may act as its caller: only its function carries the token vault.
    connections: callerConnections,
  },
  input: githubInput,
  output: githubOutput,
  settings: githubSettings,
  // The requests load on first use: the API, which validates calls and never runs this tool,
  // keeps them out of its cold start (its bundle is split; the tool's own is not).
  async execute(input, context) {
    return (await operations()).runGitHubAction(input, context);
  },
});
