import { defineTool } from "@toolbus/core/tool-definition";
import * as z from "zod";
import { gitRef, ownerName, repoName, repoPath } from "./names";
import { GITHUB_TOKEN } from "./request";

export const GITHUB_API_URL = "https://api.github.com";

/** `tools.github_api` in the stage configuration. */
export const githubSettings = z.strictObject({
  baseUrl: z
    .url({ protocol: /^https?$/, error: "baseUrl must be an http or https URL" })
    .default(GITHUB_API_URL)
    .describe("REST API root: https://api.github.com, or https://<host>/api/v3 for Enterprise."),
  maxFileBytes: z
    .number()
    .int()
    .min(1)
    .max(100 * 1024 * 1024)
    .default(1024 * 1024)
    .describe("Largest file get_file and get_readme return, in bytes."),
});
export type GitHubSettings = z.infer<typeof githubSettings>;

const limit = z.number().int().min(1).max(30).default(10).describe("Most items to return.");

export const getFileInput = z.strictObject({
  action: z.literal("get_file"),
  owner: ownerName,
  repo: repoName,
  path: repoPath,
  ref: gitRef.optional(),
});
export const getReadmeInput = z.strictObject({
  action: z.literal("get_readme"),
  owner: ownerName,
  repo: repoName,
  ref: gitRef.optional(),
});
export const listReleasesInput = z.strictObject({
  action: z.literal("list_releases"),
  owner: ownerName,
  repo: repoName,
  limit,
});
export const getIssueInput = z.strictObject({
  action: z.literal("get_issue"),
  owner: ownerName,
  repo: repoName,
  number: z
    .number()
    .int()
    .min(1)
    .max(2_147_483_647)
    .describe("Issue or pull request number: they share one sequence."),
});
export const searchCodeInput = z.strictObject({
  action: z.literal("search_code"),
  query: z
    .string()
    .trim()
    .min(1)
    .max(256)
    .describe("GitHub code search syntax: words plus qualifiers like repo:, language:, path:."),
  limit,
});

// MCP clients expect an object at the top of an input schema; the variants are all objects.
export const githubInput = z
  .discriminatedUnion("action", [
    getFileInput,
    getReadmeInput,
    listReleasesInput,
    getIssueInput,
    searchCodeInput,
  ])
  .meta({ type: "object" });
export type GitHubInput = z.infer<typeof githubInput>;

const fileFields = {
  owner: z.string(),
  repo: z.string(),
  path: z.string(),
  name: z.string(),
  ref: z.string().optional().describe("The ref asked for; absent means the default branch."),
  sha: z.string().describe("Blob SHA of the file."),
  size: z.number().int().nonnegative().describe("Size in bytes."),
  url: z.string().optional().describe("The file on github.com."),
  binary: z.boolean().describe("True when the file is not text; content is then left out."),
  content: z.string().optional().describe("The decoded text."),
};

const releaseOutput = z.object({
  tag: z.string(),
  name: z.string().nullable(),
  url: z.string(),
  draft: z.boolean(),
  prerelease: z.boolean(),
  publishedAt: z.string().nullable(),
  author: z.string().nullable(),
  notes: z.string().describe("Release notes (Markdown), shortened to 2,000 characters."),
  notesTruncated: z.boolean(),
});

export const githubOutput = z
  .discriminatedUnion("action", [
    z.object({ action: z.literal("get_file"), ...fileFields }),
    z.object({ action: z.literal("get_readme"), ...fileFields }),
    z.object({
      action: z.literal("list_releases"),
      owner: z.string(),
      repo: z.string(),
      releases: z.array(releaseOutput).describe("Newest first."),
    }),
    z.object({
      action: z.literal("get_issue"),
      owner: z.string(),
      repo: z.string(),
      number: z.number().int(),
      kind: z.enum(["issue", "pull_request"]),
      title: z.string(),
      state: z.string().describe("open or closed."),
      stateReason: z.string().nullable().describe("completed, not_planned, reopened or null."),
      merged: z.boolean().optional().describe("Pull requests only: whether it was merged."),
      draft: z.boolean().optional(),
      author: z.string().nullable(),
      labels: z.array(z.string()),
      comments: z.number().int().nonnegative(),
      createdAt: z.string(),
      updatedAt: z.string(),
      closedAt: z.string().nullable(),
      url: z.string(),
      body: z.string().describe("The description (Markdown), shortened to 20,000 characters."),
      bodyTruncated: z.boolean(),
    }),
    z.object({
      action: z.literal("search_code"),
      query: z.string(),
      totalCount: z.number().int().nonnegative(),
      incompleteResults: z.boolean(),
      items: z.array(
        z.object({
          repository: z.string().describe("owner/repo"),
          path: z.string(),
          name: z.string(),
          sha: z.string(),
          url: z.string(),
          fragments: z.array(z.string()).describe("Matching excerpts, when GitHub sends them."),
        }),
      ),
    }),
  ])
  .meta({ type: "object" });
export type GitHubOutput = z.infer<typeof githubOutput>;
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
  input: githubInput,
  output: githubOutput,
  settings: githubSettings,
  // The requests load on first use: the API, which validates calls and never runs this tool,
  // keeps them out of its cold start (its bundle is split; the tool's own is not).
  async execute(input, context) {
    return (await import("./operations")).runGitHubAction(input, context);
  },
});
