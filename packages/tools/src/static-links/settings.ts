import * as z from "zod";

/*
 * The settings apart from the tool: its capability reads them, and the tool names its
 * capability, so neither module imports the other.
 */

/** A platform or tag name, in a link and in a filter. */
export const linkName = z.string().trim().min(1).max(40);

/** One link as the stage operator configures it. */
export const staticLink = z.strictObject({
  platform: linkName.describe("Where the link points: github, discord, mastodon, website, docs..."),
  url: z.url({
    protocol: /^https$/,
    hostname: z.regexes.domain,
    error: "url must be an https URL with a domain name",
  }),
  label: z.string().trim().min(1).max(120).describe("Link text a reader sees."),
  tags: z
    .array(linkName)
    .max(20)
    .default([])
    .describe("Free-form labels to filter by: community..."),
  description: z.string().trim().min(1).max(500).optional(),
});
export type StaticLink = z.infer<typeof staticLink>;

/** `tools.static_links` in the stage configuration. */
export const staticLinksSettings = z.strictObject({
  links: z.array(staticLink).max(200).default([]),
});
export type StaticLinksSettings = z.infer<typeof staticLinksSettings>;
