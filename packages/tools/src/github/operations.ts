import { type ToolContext, ToolFailure } from "@toolbus/core/tool-definition";
import { type Citation, Failures } from "@toolbus/wire/model";
import type * as z from "zod";
import { encodePath } from "./names";
import {
  type ContentEntry,
  codeSearchPayload,
  contentEntry,
  contentListing,
  decodeBase64,
  decodeText,
  issuePayload,
  parsePayload,
  releaseList,
} from "./payloads";
import { githubGet, readJson, unreadable } from "./request";
import type {
  GitHubInput,
  GitHubOutput,
  getFileInput,
  getIssueInput,
  getReadmeInput,
  listReleasesInput,
  searchCodeInput,
} from "./schemas";
import type { GitHubSettings } from "./settings";

type Output<A extends GitHubOutput["action"]> = Extract<GitHubOutput, { action: A }>;

type Context = ToolContext<GitHubSettings>;
type Outcome = { output: string; data: GitHubOutput; citations: Citation[] };

const NOTES_MAX = 2_000;
const BODY_MAX = 20_000;
/** Room for base64 (4/3), its line breaks and the JSON around it. */
const jsonCapFor = (fileBytes: number) => Math.ceil(fileBytes * 1.4) + 64 * 1024;

/** Runs one of github_api's actions: what its `execute` loads on first use. */
export function runGitHubAction(input: GitHubInput, context: Context): Promise<Outcome> {
  switch (input.action) {
    case "get_file":
      return getFile(input, context);
    case "get_readme":
      return getReadme(input, context);
    case "list_releases":
      return listReleases(input, context);
    case "get_issue":
      return getIssue(input, context);
    case "search_code":
      return searchCode(input, context);
  }
}

function repoApi(owner: string, repo: string): string {
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
}

function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
  const search = params.toString();
  return search === "" ? path : `${path}?${search}`;
}

function at(ref: string | undefined): string {
  return ref === undefined ? "" : ` at ${ref}`;
}

async function getFile(input: z.infer<typeof getFileInput>, context: Context): Promise<Outcome> {
  const { owner, repo, path, ref } = input;
  const where = `${path} in ${owner}/${repo}${at(ref)}`;
  const apiPath = withQuery(`${repoApi(owner, repo)}/contents/${encodePath(path)}`, { ref });
  const response = await githubGet(context, context.settings.baseUrl, {
    path: apiPath,
    maxBytes: jsonCapFor(context.settings.maxFileBytes),
    notFound: `GitHub has no file ${where}, or the repository is not visible to this stage's token`,
  });
  const body = readJson(response);
  if (Array.isArray(body)) throw directoryFailure(where, body);
  const entry = parsePayload(contentEntry, body);
  if (!entry) throw unreadable();
  if (entry.type === "symlink") {
    throw wrongKind(
      `${where} is a symbolic link to ${entry.target ?? "a path outside the repository"}; ask for the path it points to.`,
    );
  }
  if (entry.type === "submodule") {
    throw wrongKind(
      `${where} is a git submodule${entry.submodule_git_url ? ` (${entry.submodule_git_url})` : ""}; read it from its own repository.`,
    );
  }
  if (entry.type === "dir") throw directoryFailure(where, []);
  if (entry.type !== "file") throw unreadable();
  const data = await fileData("get_file", input, entry, apiPath, where, context);
  return fileOutcome(data, `${owner}/${repo}: ${data.path}`);
}

async function getReadme(
  input: z.infer<typeof getReadmeInput>,
  context: Context,
): Promise<Outcome> {
  const { owner, repo, ref } = input;
  const apiPath = withQuery(`${repoApi(owner, repo)}/readme`, { ref });
  const response = await githubGet(context, context.settings.baseUrl, {
    path: apiPath,
    maxBytes: jsonCapFor(context.settings.maxFileBytes),
    notFound: `GitHub has no README in ${owner}/${repo}${at(ref)}, or the repository is not visible to this stage's token`,
  });
  const entry = parsePayload(contentEntry, readJson(response));
  if (entry?.type !== "file") throw unreadable();
  const where = `the README of ${owner}/${repo}${at(ref)}`;
  const data = await fileData("get_readme", input, entry, apiPath, where, context);
  return fileOutcome(data, `README of ${owner}/${repo}`);
}

/** A file's metadata and, when it is text within the size cap, its content. */
async function fileData<A extends "get_file" | "get_readme">(
  action: A,
  input: { owner: string; repo: string; ref?: string | undefined },
  entry: ContentEntry,
  apiPath: string,
  where: string,
  context: Context,
): Promise<Output<A>> {
  const max = context.settings.maxFileBytes;
  if (entry.size > max) {
    throw new ToolFailure(
      Failures.upstreamError(
        `${where} is ${entry.size} bytes, more than the ${max} bytes this stage returns ` +
          "(tools.github_api.maxFileBytes). Ask for a smaller file or search for the part you need.",
        { retryable: false, recovery: "correct_call" },
      ),
    );
  }
  let bytes: Uint8Array | undefined;
  if (entry.encoding === "base64" && entry.content !== undefined) {
    bytes = decodeBase64(entry.content);
    if (!bytes) throw unreadable();
  } else {
    // Over 1 MB the contents API sends no content ("encoding": "none"); the raw media type does.
    const raw = await githubGet(context, context.settings.baseUrl, {
      path: apiPath,
      accept: "application/vnd.github.raw+json",
      maxBytes: max,
      notFound: `GitHub has no content for ${where}`,
    });
    bytes = raw.body;
  }
  const text = decodeText(bytes);
  const data = {
    action,
    owner: input.owner,
    repo: input.repo,
    path: entry.path,
    name: entry.name,
    ...(input.ref !== undefined ? { ref: input.ref } : {}),
    sha: entry.sha,
    size: entry.size,
    ...(entry.html_url ? { url: entry.html_url } : {}),
    binary: text === undefined,
    ...(text !== undefined ? { content: text } : {}),
  };
  return data as Output<A>;
}

function fileOutcome(data: Output<"get_file" | "get_readme">, title: string): Outcome {
  const ref = data.ref === undefined ? "" : `, ref ${data.ref}`;
  const head = `${title} (${data.path}, ${data.size} bytes${ref})${data.url ? ` — ${data.url}` : ""}`;
  const output =
    data.content === undefined
      ? `${head}\nThis is a binary file; its content is not returned, only its metadata.`
      : `${head}\n\n${fence(data.content)}`;
  const citations: Citation[] = data.url ? [{ title, url: data.url }] : [];
  return { output, data, citations };
}

/** A code fence longer than any backtick run inside, so the content cannot close it. */
function fence(content: string): string {
  const longest = Math.max(2, ...[...content.matchAll(/`+/g)].map((m) => m[0].length));
  const marks = "`".repeat(longest + 1);
  return `${marks}\n${content}${content.endsWith("\n") ? "" : "\n"}${marks}`;
}

function directoryFailure(where: string, listing: unknown[]): ToolFailure {
  const entries = parsePayload(contentListing, listing) ?? [];
  const names = entries.slice(0, 20).map((e) => (e.type === "dir" ? `${e.name}/` : e.name));
  const more = entries.length > names.length ? `, and ${entries.length - names.length} more` : "";
  const holds = names.length > 0 ? ` It holds: ${names.join(", ")}${more}.` : "";
  return wrongKind(`${where} is a directory, not a file.${holds} Ask for one file inside it.`);
}

function wrongKind(message: string): ToolFailure {
  return new ToolFailure(
    Failures.upstreamError(message, { retryable: false, recovery: "correct_call" }),
  );
}

async function listReleases(
  input: z.infer<typeof listReleasesInput>,
  context: Context,
): Promise<Outcome> {
  const { owner, repo } = input;
  const response = await githubGet(context, context.settings.baseUrl, {
    path: withQuery(`${repoApi(owner, repo)}/releases`, { per_page: String(input.limit) }),
    maxBytes: 8 * 1024 * 1024,
    notFound: `GitHub has no repository ${owner}/${repo}, or it is not visible to this stage's token`,
  });
  const list = parsePayload(releaseList, readJson(response));
  if (!list) throw unreadable();
  const releases = list.slice(0, input.limit).map((r) => {
    const notes = clip(r.body ?? "", NOTES_MAX);
    return {
      tag: r.tag_name,
      name: r.name?.trim() ? r.name.trim() : null,
      url: r.html_url,
      draft: r.draft,
      prerelease: r.prerelease,
      publishedAt: r.published_at ?? null,
      author: r.author?.login ?? null,
      notes: notes.text,
      notesTruncated: notes.truncated,
    };
  });
  const data: Output<"list_releases"> = { action: "list_releases", owner, repo, releases };
  const lines = releases.map((r) => {
    const flags = [r.prerelease ? "prerelease" : "", r.draft ? "draft" : ""].filter(Boolean);
    const name = r.name && r.name !== r.tag ? ` "${r.name}"` : "";
    const date = r.publishedAt ? `published ${r.publishedAt.slice(0, 10)}` : "not published";
    const summary = oneLine(r.notes, 200);
    return (
      `- ${r.tag}${name} — ${date}${flags.length > 0 ? ` (${flags.join(", ")})` : ""} — ${r.url}` +
      (summary === "" ? "" : `\n  ${summary}`)
    );
  });
  const output =
    releases.length === 0
      ? `${owner}/${repo} has no published releases.`
      : [
          `Latest ${plural(releases.length, "release")} of ${owner}/${repo}, newest first:`,
          ...lines,
        ].join("\n");
  const citations = releases.map((r) => ({ title: `${owner}/${repo} ${r.tag}`, url: r.url }));
  return { output, data, citations };
}

async function getIssue(input: z.infer<typeof getIssueInput>, context: Context): Promise<Outcome> {
  const { owner, repo, number } = input;
  const response = await githubGet(context, context.settings.baseUrl, {
    path: `${repoApi(owner, repo)}/issues/${number}`,
    maxBytes: 2 * 1024 * 1024,
    notFound: `GitHub has no issue or pull request #${number} in ${owner}/${repo}, or it is not visible to this stage's token`,
  });
  const issue = parsePayload(issuePayload, readJson(response));
  if (!issue) throw unreadable();
  const isPull = issue.pull_request != null;
  const body = clip(issue.body ?? "", BODY_MAX);
  const data: Output<"get_issue"> = {
    action: "get_issue",
    owner,
    repo,
    number: issue.number,
    kind: isPull ? "pull_request" : "issue",
    title: issue.title,
    state: issue.state,
    stateReason: issue.state_reason ?? null,
    ...(isPull ? { merged: Boolean(issue.pull_request?.merged_at) } : {}),
    ...(issue.draft !== undefined ? { draft: issue.draft } : {}),
    author: issue.user?.login ?? null,
    labels: issue.labels
      .map((l) => (typeof l === "string" ? l : (l.name ?? "")))
      .filter((l) => l !== ""),
    comments: issue.comments,
    createdAt: issue.created_at,
    updatedAt: issue.updated_at,
    closedAt: issue.closed_at ?? null,
    url: issue.html_url,
    body: body.text,
    bodyTruncated: body.truncated,
  };
  const kind = isPull ? "Pull request" : "Issue";
  const state = [
    data.state,
    data.merged ? "merged" : "",
    data.draft ? "draft" : "",
    data.stateReason && data.stateReason !== "reopened" ? data.stateReason.replace(/_/g, " ") : "",
  ].filter(Boolean);
  const facts = [
    `State: ${state.join(", ")}`,
    data.author ? `by @${data.author}` : "",
    plural(data.comments, "comment"),
    data.labels.length > 0 ? `labels: ${data.labels.join(", ")}` : "",
  ].filter(Boolean);
  const dates = [
    `Opened ${data.createdAt.slice(0, 10)}`,
    `updated ${data.updatedAt.slice(0, 10)}`,
    data.closedAt ? `closed ${data.closedAt.slice(0, 10)}` : "",
  ].filter(Boolean);
  const output = [
    `${kind} ${owner}/${repo}#${data.number}: ${data.title}`,
    facts.join(" · "),
    dates.join(", "),
    data.url,
    "",
    data.body === "" ? "(No description.)" : data.body,
    data.bodyTruncated ? "\n(Description shortened.)" : "",
  ]
    .join("\n")
    .trimEnd();
  const citations = [{ title: `${owner}/${repo}#${data.number}: ${data.title}`, url: data.url }];
  return { output, data, citations };
}

async function searchCode(
  input: z.infer<typeof searchCodeInput>,
  context: Context,
): Promise<Outcome> {
  const response = await githubGet(context, context.settings.baseUrl, {
    path: withQuery("/search/code", { q: input.query, per_page: String(input.limit) }),
    // The text-match media type adds the matching fragments to each item.
    accept: "application/vnd.github.text-match+json",
    maxBytes: 4 * 1024 * 1024,
    notFound: "GitHub's code search is not available at the configured API address",
  });
  const result = parsePayload(codeSearchPayload, readJson(response));
  if (!result) throw unreadable();
  const items = result.items.slice(0, input.limit).map((item) => ({
    repository: item.repository.full_name,
    path: item.path,
    name: item.name,
    sha: item.sha,
    url: item.html_url,
    fragments: (item.text_matches ?? [])
      .map((m) => m.fragment ?? "")
      .filter((f) => f.trim() !== "")
      .slice(0, 3),
  }));
  const data: Output<"search_code"> = {
    action: "search_code",
    query: input.query,
    totalCount: result.total_count,
    incompleteResults: result.incomplete_results,
    items,
  };
  const incomplete = data.incompleteResults ? "; GitHub's count is incomplete" : "";
  const lines = items.map((item, i) => {
    const fragment = oneLine(item.fragments[0] ?? "", 200);
    return (
      `${i + 1}. ${item.repository}: ${item.path} — ${item.url}` +
      (fragment === "" ? "" : `\n   ${fragment}`)
    );
  });
  const output =
    items.length === 0
      ? `No code on GitHub matches "${input.query}". Try fewer words or other qualifiers.`
      : [
          `Code search for "${input.query}": ${plural(data.totalCount, "match", "matches")}` +
            ` (showing ${items.length}${incomplete}):`,
          ...lines,
        ].join("\n");
  const citations = items.map((item) => ({
    title: `${item.repository}: ${item.path}`,
    url: item.url,
  }));
  return { output, data, citations };
}

function clip(text: string, max: number): { text: string; truncated: boolean } {
  return text.length <= max
    ? { text, truncated: false }
    : { text: `${text.slice(0, max - 1).trimEnd()}…`, truncated: true };
}

function oneLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, " ").trim(), max).text;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}
