import * as z from "zod";

/*
 * The settings apart from the tool: its capability reads them, and the tool names its
 * capability, so neither module imports the other.
 */

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
