import { parseStageConfig } from "@toolbus/core/config";
import { describe, expect, it } from "vitest";
import { bearerChallenge, resourceMetadataUrl } from "./challenge";

const oauthFor = (resource: string, extra: Record<string, unknown> = {}) => {
  const config = parseStageConfig({
    auth: {
      oauth: {
        issuer: "https://issuer.example.com",
        resource,
        roles: { claim: "groups", default: "viewer" },
        ...extra,
      },
    },
  });
  const oauth = config.auth?.oauth;
  if (!oauth) throw new Error("no oauth");
  return oauth;
};

describe("the bearer challenge", () => {
  it("puts the well-known segment between the host and the resource's path (RFC 9728 §3.1)", () => {
    expect(resourceMetadataUrl(oauthFor("https://t.example.com/mcp"))).toBe(
      "https://t.example.com/.well-known/oauth-protected-resource/mcp",
    );
    expect(resourceMetadataUrl(oauthFor("https://t.example.com/"))).toBe(
      "https://t.example.com/.well-known/oauth-protected-resource",
    );
    expect(resourceMetadataUrl(oauthFor("https://t.example.com/a/mcp/"))).toBe(
      "https://t.example.com/.well-known/oauth-protected-resource/a/mcp",
    );
  });

  it("stays a bare Bearer without OAuth, and names the required scope over the listed ones", () => {
    expect(bearerChallenge(undefined, { code: "invalid_token", description: "x" })).toBe("Bearer");
    const oauth = oauthFor("https://t.example.com/mcp", {
      requiredScope: "toolbus/mcp",
      scopesSupported: ["openid", "toolbus/mcp"],
    });
    expect(
      bearerChallenge(oauth, { code: "invalid_token", description: 'a "quoted" \\ word' }),
    ).toBe(
      'Bearer error="invalid_token", error_description="a \\"quoted\\" \\\\ word", resource_metadata="https://t.example.com/.well-known/oauth-protected-resource/mcp", scope="toolbus/mcp"',
    );
  });
});
