import { networkCapability } from "@toolbus/core/capabilities";
import { createHttpClient } from "@toolbus/core/outbound";
import { defineTool } from "@toolbus/core/tool-definition";
import { onFirstUse } from "@toolbus/core/util/on-first-use";
import type { ToolsetSpec } from "@toolbus/wire/model";
import { linkValidatorInput, linkValidatorOutput, TOOL_TIMEOUT_MS } from "./schemas";

// The checks load with the first call and are kept.
const checking = onFirstUse(() => import("./check"));

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
  needs: { detectors: [networkCapability], network: createHttpClient },
  input: linkValidatorInput,
  output: linkValidatorOutput,
  // The checks load on first use: the API validates calls and never runs them.
  async execute(input, context) {
    return (await checking()).runLinkValidator(input, context);
  },
});
