import * as z from "zod";

/**
 * The parts of GitHub REST payloads (API version 2022-11-28) the tool reads. Objects stay
 * open: GitHub adds fields over time, and extra fields must not make a good answer unreadable.
 */

const nullableString = z.string().nullable().optional();

/** `GET /repos/{owner}/{repo}/contents/{path}` and `.../readme` for one entry. */
export const contentEntry = z.object({
  type: z.string(),
  name: z.string(),
  path: z.string(),
  sha: z.string(),
  size: z.number().int().nonnegative(),
  html_url: nullableString,
  download_url: nullableString,
  /** "base64" with the content; "none" (empty content) for files over 1 MB. */
  encoding: z.string().optional(),
  content: z.string().optional(),
  /** Symlinks whose target is not a regular file in the repository. */
  target: z.string().optional(),
  submodule_git_url: z.string().optional(),
});
export type ContentEntry = z.infer<typeof contentEntry>;

/** A directory's listing is an array of entries without content. */
export const contentListing = z.array(
  z.object({ type: z.string(), name: z.string(), path: z.string() }),
);

const user = z.object({ login: z.string() }).nullable().optional();

/** `GET /repos/{owner}/{repo}/releases`. */
export const releaseList = z.array(
  z.object({
    tag_name: z.string(),
    name: nullableString,
    html_url: z.string(),
    draft: z.boolean().default(false),
    prerelease: z.boolean().default(false),
    created_at: nullableString,
    published_at: nullableString,
    body: nullableString,
    author: user,
  }),
);

/** `GET /repos/{owner}/{repo}/issues/{number}`: pull requests are issues with `pull_request`. */
export const issuePayload = z.object({
  number: z.number().int(),
  title: z.string(),
  state: z.string(),
  state_reason: nullableString,
  html_url: z.string(),
  user,
  labels: z
    .array(z.union([z.string(), z.object({ name: z.string().nullable().optional() })]))
    .default([]),
  comments: z.number().int().nonnegative().default(0),
  created_at: z.string(),
  updated_at: z.string(),
  closed_at: nullableString,
  body: nullableString,
  draft: z.boolean().optional(),
  locked: z.boolean().optional(),
  pull_request: z
    .object({ html_url: nullableString, merged_at: nullableString })
    .nullable()
    .optional(),
});

/** `GET /search/code` with the text-match media type. */
export const codeSearchPayload = z.object({
  total_count: z.number().int().nonnegative(),
  incomplete_results: z.boolean().default(false),
  items: z.array(
    z.object({
      name: z.string(),
      path: z.string(),
      sha: z.string(),
      html_url: z.string(),
      repository: z.object({ full_name: z.string(), html_url: z.string().optional() }),
      text_matches: z
        .array(z.object({ fragment: z.string().optional(), property: z.string().optional() }))
        .optional(),
    }),
  ),
});

/** Parses a payload, or undefined when its shape is not the documented one. */
export function parsePayload<T>(schema: z.ZodType<T>, body: unknown): T | undefined {
  const parsed = schema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

/**
 * A file's bytes as text, or undefined when they are binary: a NUL byte (git's own test) or
 * bytes that are not UTF-8.
 */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Base64 content as the contents API sends it: wrapped at 60 columns with newlines. */
export function decodeBase64(content: string): Uint8Array | undefined {
  const compact = content.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(compact, "base64"));
}
