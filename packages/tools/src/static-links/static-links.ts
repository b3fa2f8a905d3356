import { defineTool } from "@toolbus/core/tool-definition";
import type { Citation } from "@toolbus/wire/model";
import * as z from "zod";
import { staticLinksCapability } from "./capability";
import { linkName, type StaticLink, staticLinksSettings } from "./settings";

export const staticLinksInput = z.strictObject({
  platform: linkName.optional().describe("Only links of this platform, ignoring case: github."),
  tag: linkName.optional().describe("Only links carrying this tag, ignoring case."),
  limit: z.number().int().min(1).max(100).default(50).describe("Most links to return."),
});
export type StaticLinksInput = z.infer<typeof staticLinksInput>;

export const staticLinksOutput = z.object({
  links: z.array(
    z.object({
      platform: z.string(),
      url: z.string(),
      label: z.string(),
      tags: z.array(z.string()),
      description: z.string().optional(),
    }),
  ),
  total: z.number().int().nonnegative().describe("Links matching the filters, before the limit."),
  filteredBy: z.object({
    platform: z.string().optional(),
    tag: z.string().optional(),
    limit: z.number().int().positive(),
  }),
});
export type StaticLinksOutput = z.infer<typeof staticLinksOutput>;

export const staticLinks = defineTool({
  spec: {
    id: "static_links",
    toolset: "static_links",
    title: "Project links",
    description:
      "Returns the links configured for this deployment: the project's source repository, " +
      "chat and forum, social accounts, website and documentation, each with a label, " +
      "platform and tags. Filter by platform or tag.",
    category: "reference",
    optionality: "optional",
    usageHint:
      "Use when the text should send readers to the project's own channels (a call to join " +
      "the community, a contributing section, a footer or sign-off) and you need the real URL.",
    guidelines: {
      do: [
        "Ask for one platform or tag (platform 'github', tag 'community') when you need one link.",
        "Copy URLs and labels exactly as returned, and cite the links you use.",
        "Treat an empty result as 'not configured' and leave that link out of the text.",
        "Call it once per task: the links only change when the deployment's config does.",
      ],
      dont: [
        "Don't make up or complete a URL for a platform the tool did not return.",
        "Don't use it to find pages about other projects or the web at large: it only knows " +
          "the links configured here.",
        "Don't paste the whole list when the reader needs one link.",
      ],
    },
    requires: [],
    produces: ["links", "citations"],
    examples: [
      { title: "All configured links", input: {} },
      { title: "The source repository", input: { platform: "github", limit: 1 } },
      { title: "Places to talk to the community", input: { tag: "community" } },
    ],
    timeoutMs: 2_000,
    annotations: { readOnly: true, openWorld: false, idempotent: true },
    setup: [
      {
        name: "tools.static_links.links",
        description:
          "The links this tool returns, in the order they should be listed. Set it in the " +
          "stage configuration (TOOLBUS_CONFIG, or the file TOOLBUS_CONFIG_FILE names) as a " +
          "list of { platform, url, label, tags?, description? }, for example " +
          '{"tools":{"static_links":{"links":[{"platform":"github","label":"Source code",' +
          '"url":"https://github.com/acme/widget","tags":["code"]}]}}}. URLs must be https. ' +
          "Without links the tool still works and answers that none are configured.",
        required: false,
      },
    ],
    version: "1",
  },
  // Not required (without links it answers that none are configured): its capability says
  // whether it has links to serve in another tool's place.
  needs: { detectors: [staticLinksCapability] },
  input: staticLinksInput,
  output: staticLinksOutput,
  settings: staticLinksSettings,
  async execute(input, { settings }) {
    const configured = settings.links;
    const platform = input.platform?.toLowerCase();
    const tag = input.tag?.toLowerCase();
    const matching = configured.filter(
      (link) =>
        (platform === undefined || link.platform.toLowerCase() === platform) &&
        (tag === undefined || link.tags.some((t) => t.toLowerCase() === tag)),
    );
    const links = matching.slice(0, input.limit);
    const data: StaticLinksOutput = {
      links,
      total: matching.length,
      filteredBy: {
        ...(input.platform === undefined ? {} : { platform: input.platform }),
        ...(input.tag === undefined ? {} : { tag: input.tag }),
        limit: input.limit,
      },
    };
    const citations: Citation[] = links.map((link) => ({
      title: link.label,
      url: link.url,
      ...(link.description === undefined ? {} : { snippet: link.description }),
    }));
    return { output: describe(configured, data), data, citations };
  },
});

function describe(configured: readonly StaticLink[], data: StaticLinksOutput): string {
  if (configured.length === 0) {
    return "No links are configured on this deployment. Leave project links out rather than guessing them.";
  }
  const filters = [
    data.filteredBy.platform === undefined ? "" : `platform "${data.filteredBy.platform}"`,
    data.filteredBy.tag === undefined ? "" : `tag "${data.filteredBy.tag}"`,
  ].filter((f) => f !== "");
  if (data.total === 0) {
    const platforms = [...new Set(configured.map((l) => l.platform.toLowerCase()))].sort();
    const tags = [...new Set(configured.flatMap((l) => l.tags.map((t) => t.toLowerCase())))].sort();
    return [
      `No configured link matches ${filters.join(" and ")}.`,
      `Platforms configured: ${platforms.join(", ")}.`,
      tags.length > 0 ? `Tags in use: ${tags.join(", ")}.` : "No link has tags.",
    ].join("\n");
  }
  const scope = filters.length > 0 ? ` for ${filters.join(" and ")}` : "";
  const count =
    data.links.length < data.total
      ? `${data.links.length} of ${data.total} links`
      : `${data.total} ${data.total === 1 ? "link" : "links"}`;
  const lines = data.links.map((link) => {
    const details = [link.platform, ...link.tags.map((t) => `#${t}`)].join(", ");
    const about = link.description === undefined ? "" : ` — ${link.description}`;
    return `- [${escapeLabel(link.label)}](${linkTarget(link.url)}) (${details})${about}`;
  });
  return [`Configured project links${scope} (${count}):`, ...lines].join("\n");
}

function escapeLabel(label: string): string {
  return label.replace(/[\\[\]]/g, (c) => `\\${c}`);
}

/** Parentheses or spaces would end a Markdown link early; angle brackets keep it whole. */
function linkTarget(url: string): string {
  const safe = url.replace(/</g, "%3C").replace(/>/g, "%3E");
  return /[()\s]/.test(safe) ? `<${safe}>` : safe;
}
