import * as z from "zod";

/**
 * Account (user or organization) names: letters, digits and hyphens, 1-39 characters, not
 * starting or ending with a hyphen. GitHub refuses double hyphens in new names, but older
 * accounts have them, so they are let through.
 */
export const ownerName = z
  .string()
  .regex(
    /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/,
    "owner must be a GitHub user or organization name: letters, digits and inner hyphens, up to 39 characters",
  )
  .describe("The account that owns the repository: octocat, nodejs.");

export const repoName = z
  .string()
  .regex(
    /^[A-Za-z0-9._-]{1,100}$/,
    "repo must be a repository name: letters, digits, '.', '-' and '_', up to 100 characters",
  )
  .refine((name) => name !== "." && name !== "..", "repo cannot be '.' or '..'")
  .describe("The repository name without the owner: node, Hello-World.");

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A file path inside a repository, as the contents API takes it. */
export const repoPath = z
  .string()
  .min(1)
  .max(1_000)
  .superRefine((path, ctx) => {
    const problem = pathProblem(path);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe("Path from the repository root, with / between folders: src/index.ts.");

function pathProblem(path: string): string | undefined {
  if (path.startsWith("/"))
    return "path must be relative to the repository root, without a leading /";
  if (path.includes("\\")) return "path must separate folders with /, not \\";
  if (CONTROL.test(path)) return "path must not contain control characters";
  const segments = path.split("/");
  if (segments.includes("..")) return "path must not contain .. segments";
  if (segments.some((s) => s === "" || s === ".")) {
    return "path must not contain empty or . segments (no // and no trailing /)";
  }
  return undefined;
}

/**
 * A branch, tag or commit SHA, checked with git's own ref-name rules so that nothing odd
 * reaches the query string.
 */
export const gitRef = z
  .string()
  .min(1)
  .max(255)
  .refine(
    isValidRef,
    "ref must be a branch, tag or commit SHA: no spaces, '..', '@{', or any of ~ ^ : ? * [ \\",
  )
  .describe("Branch, tag or commit SHA; the default branch when left out.");

export function isValidRef(ref: string): boolean {
  if (CONTROL.test(ref) || /[\s~^:?*[\\]/.test(ref)) return false;
  if (ref.includes("..") || ref.includes("@{") || ref === "@") return false;
  if (ref.startsWith("/") || ref.endsWith("/") || ref.includes("//")) return false;
  if (ref.endsWith(".") || ref.endsWith(".lock")) return false;
  return ref.split("/").every((segment) => !segment.startsWith("."));
}

/** Path segments escaped one by one, so `/` keeps separating folders in the URL. */
export function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}
