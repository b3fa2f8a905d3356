import * as z from "zod";
import { gitRef, ownerName, repoName, repoPath } from "./names";

/*
 * The tool's schemas apart from its definition: the operations read them, and the tool loads
 * the operations on its first call, so neither module imports the other.
 */

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
