import type { ToolsetSpec } from "@toolbus/core/model";
import { defineTool } from "@toolbus/core/tool-definition";
import * as z from "zod";

/** Checks in flight at once: polite to a single host, quick enough for 50 links. */
export const LINK_CONCURRENCY = 5;
export const MAX_URLS = 50;
const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_TIMEOUT_MS = 15_000;
const TOOL_TIMEOUT_MS = 30_000;
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

export const linkValidatorToolset: ToolsetSpec = {
  name: "link_validator",
  description:
    "Live checks of web links: reachability, HTTP status, redirect chains and content types, " +
    "behind the stage's SSRF guard.",
  owner: "toolbus",
  kind: "builtin",
};

export const linkValidator = defineTool({
  spec: {
    id: "link_validator",
    toolset: "link_validator",
    title: "Link validator",
    description:
      "Checks whether web links work right now. For each URL it reports whether it is " +
      "reachable, the HTTP status, where redirects lead (the whole chain), the content type " +
      "and how long the answer took. Up to 50 links per call, checked a few at a time; links " +
      "to private or internal addresses are reported as blocked, not fetched.",
    category: "reference",
    optionality: "optional",
    usageHint:
      "Use before publishing or recommending links (a reference list, release notes, docs) " +
      "to catch 404s, dead hosts and redirects that land somewhere unexpected.",
    guidelines: {
      do: [
        "Batch every link of a document into one call instead of one call per link.",
        "Replace a link whose finalUrl differs a lot from the original with the final URL, " +
          "or say where it now leads.",
        "Treat timeout and network errors as 'could not verify now', not as proof the page is gone.",
        "Drop or flag links that answer 404 or 410 before the text goes out.",
      ],
      dont: [
        "Don't use it to read pages: it only looks at status and headers, never content.",
        "Don't re-check the same links within a few minutes; results are cached for 10 minutes.",
        "Don't try to reach internal hosts (localhost, 10.x, metadata endpoints) through it; " +
          "they are blocked by design.",
        "Don't assume reachable means correct: a page can answer 200 and still be the wrong one.",
      ],
    },
    requires: ["network"],
    produces: ["link_status"],
    examples: [
      {
        title: "Check the links of a README before publishing",
        input: {
          urls: [
            "https://nodejs.org/en/download",
            "https://github.com/nodejs/node/blob/main/CONTRIBUTING.md",
            "https://example.com/old-page",
          ],
        },
      },
      {
        title: "Check one slow link with a longer wait",
        input: { urls: ["https://www.iana.org/help/example-domains"], timeout_ms: 12_000 },
      },
    ],
    cache: { ttlSeconds: 600, keyFields: ["urls"], staleIfErrorSeconds: 0 },
    rateLimit: { perPrincipal: { limit: 30, windowSeconds: 60 } },
    timeoutMs: TOOL_TIMEOUT_MS,
    annotations: { readOnly: true, openWorld: true, idempotent: true },
    setup: [
      {
        name: "outbound.allowHosts",
        description:
          "Hosts or CIDR ranges this stage may reach even though they are private or " +
          "loopback (for example an intranet docs host, 10.20.0.0/16). Links to private, " +
          "loopback, link-local and cloud metadata addresses are otherwise reported as " +
          "blocked. Leave empty on public deployments. No secrets are needed.",
        required: false,
      },
    ],
    version: "1",
  },
  input: linkValidatorInput,
  output: linkValidatorOutput,
  // The checks load on first use: the API validates calls and never runs them.
  async execute(input, context) {
    return (await import("./check")).runLinkValidator(input, context);
  },
});
