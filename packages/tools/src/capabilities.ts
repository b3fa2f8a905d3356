import { type CapabilityDetector, networkCapability, secretCapability } from "@toolbus/core";
import { calendarCapability } from "./calendar/capability";
import { githubSettings } from "./github";

/** The capabilities the built-in tools require, with how each is detected and verified. */
export const builtinCapabilities: readonly CapabilityDetector[] = Object.freeze([
  secretCapability(
    "github_token",
    "GITHUB_TOKEN",
    "A GitHub token for the GitHub REST API.",
    async ({ config, secret, http }) => {
      const settings = githubSettings.parse(config.tools.github_api ?? {});
      const response = await http.request(`${settings.baseUrl.replace(/\/$/, "")}/user`, {
        headers: { authorization: `Bearer ${secret("GITHUB_TOKEN")}` },
        retries: 0,
      });
      return response.status === 200
        ? { available: true, source: "secret:GITHUB_TOKEN (verified)" }
        : {
            available: false,
            reason: `GitHub refused GITHUB_TOKEN (${response.status}).`,
            source: "secret:GITHUB_TOKEN",
          };
    },
  ),
  secretCapability("search_api_key", "SEARCH_API_KEY", "An API key for the Brave Search API."),
  {
    name: "google_calendar",
    description: "A Google service account or public ICS feeds for the calendar tool.",
    detect: ({ config, secret }) => calendarCapability(config.tools.calendar ?? {}, secret),
  },
  networkCapability,
]);
