import { type CapabilityDetector, secretCapability } from "@toolbus/core/capabilities";
import { githubSettings } from "./settings";

/** `github_token`: GITHUB_TOKEN is set and GitHub accepts it (`GET /user` answers 200). */
export const githubTokenCapability: CapabilityDetector = secretCapability(
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
);
