import { describe, expect, it } from "vitest";
import { checkToolSettings, parseStageConfig } from "../config";
import { providerOf } from "./config";

const base = { publicUrl: "https://toolbus.example.com" };

describe("connections in the stage configuration", () => {
  it("fills a built-in provider's endpoints and keeps a custom one's own", () => {
    const config = parseStageConfig({
      connections: {
        ...base,
        providers: {
          google: { clientId: "g", clientSecret: "GOOGLE_OAUTH_SECRET" },
          acme: {
            clientId: "a",
            authorizeUrl: "https://id.acme.test/authorize",
            tokenUrl: "https://id.acme.test/token",
          },
        },
      },
    });
    expect(providerOf(config.connections, "google")).toMatchObject({
      tokenUrl: "https://oauth2.googleapis.com/token",
      revokeUrl: "https://oauth2.googleapis.com/revoke",
      issuer: "https://accounts.google.com",
      clientSecret: "GOOGLE_OAUTH_SECRET",
    });
    expect(providerOf(config.connections, "acme")).toMatchObject({
      clientAuth: "basic",
      tokenUrl: "https://id.acme.test/token",
    });
    expect(providerOf(config.connections, "nobody")).toBeUndefined();
  });

  it("refuses a provider Toolbus does not know without its endpoints, unknown keys and a secret's value", () => {
    const problems = (value: unknown) => {
      try {
        parseStageConfig({ connections: value });
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(problems({ ...base, providers: { acme: { clientId: "a" } } })).toMatch(
      /connections\.providers\.acme\.authorizeUrl: required/,
    );
    expect(problems({ ...base, providers: { github: { clientId: "a", secret: "x" } } })).toMatch(
      /secret/,
    );
    expect(
      problems({ ...base, providers: { github: { clientId: "a", clientSecret: "ghs_value1" } } }),
    ).toMatch(/clientSecret/);
    expect(problems({ publicUrl: "https://toolbus.example.com/" })).toMatch(/trailing slash/);
    expect(problems({ publicUrl: "http://toolbus.example.com" })).toMatch(/https/);
  });

  it("lets only tools that act with a provider account choose whose, and only at a configured provider", () => {
    const tools = new Map([
      ["github_api", { spec: { credentials: { provider: "github" } } }],
      ["readability_analyzer", { spec: {} }],
    ]);
    const check = (credentials: Record<string, string>, providers: object = {}) => {
      const config = parseStageConfig({ connections: { ...base, providers, credentials } });
      try {
        checkToolSettings(config, tools);
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(check({ readability_analyzer: "user" })).toMatch(/does not act with a provider/);
    expect(check({ gihub_api: "user" })).toMatch(/no such tool/);
    expect(check({ github_api: "user" })).toMatch(/does not configure/);
    expect(check({ github_api: "user" }, { github: { clientId: "a" } })).toBe("");
  });
});
