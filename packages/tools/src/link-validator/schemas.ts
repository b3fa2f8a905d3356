import * as z from "zod";

/*
 * The tool's schemas and limits apart from its definition: the checks read them, and the
 * tool loads the checks on its first call, so neither module imports the other.
 */

/** Checks in flight at once: polite to a single host, quick enough for 50 links. */
export const LINK_CONCURRENCY = 5;
export const MAX_URLS = 50;
const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_TIMEOUT_MS = 15_000;
/** The tool's own timeout: the checks share what is left of it. */
export const TOOL_TIMEOUT_MS = 30_000;
/** Leaves the runtime's timeout room to receive the partial results instead of failing. */
export const BUDGET_MS = TOOL_TIMEOUT_MS - 3_000;

export const LINK_ERROR_KINDS = [
  "blocked",
  "timeout",
  "network",
  "too_many_redirects",
  "invalid_url",
  "http",
] as const;

const httpUrl = z
  .url({ protocol: /^https?$/, error: "each URL must be an absolute http or https URL" })
  .max(2048);

export const linkValidatorInput = z.strictObject({
  urls: z
    .array(httpUrl)
    .min(1)
    .max(MAX_URLS)
    .describe("Links to check, absolute http(s) URLs. Duplicates are checked once."),
  timeout_ms: z
    .number()
    .int()
    .min(500)
    .max(MAX_TIMEOUT_MS)
    .default(DEFAULT_TIMEOUT_MS)
    .describe("How long to wait for each link's answer, in milliseconds."),
});
export type LinkValidatorInput = z.infer<typeof linkValidatorInput>;

export const linkCheck = z.object({
  url: z.string().describe("The URL as given."),
  reachable: z.boolean().describe("True when the final answer was a 2xx or 3xx status."),
  status: z.number().int().optional().describe("The final HTTP status, when one arrived."),
  finalUrl: z.string().optional().describe("The URL that answered, after redirects."),
  redirects: z
    .array(z.string())
    .describe("Every URL that redirected, in order, starting with the URL itself."),
  contentType: z.string().optional(),
  latencyMs: z.number().int().nonnegative(),
  note: z.string().optional().describe("How the answer was obtained, when it is not plain."),
  error: z.object({ kind: z.enum(LINK_ERROR_KINDS), message: z.string() }).optional(),
});
export type LinkCheck = z.infer<typeof linkCheck>;

export const linkValidatorOutput = z.object({
  results: z.array(linkCheck).describe("One per distinct URL, in the order given."),
  summary: z.object({
    total: z.number().int().nonnegative(),
    reachable: z.number().int().nonnegative(),
    broken: z
      .number()
      .int()
      .nonnegative()
      .describe("Not reachable, for a reason other than blocked."),
    blocked: z.number().int().nonnegative().describe("Refused by this stage's SSRF guard."),
  }),
});
export type LinkValidatorOutput = z.infer<typeof linkValidatorOutput>;
