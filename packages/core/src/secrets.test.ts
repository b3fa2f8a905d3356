import { describe, expect, it } from "vitest";
import {
  boundSecretNames,
  loadSecrets,
  type ParameterFetcher,
  SST_SECRET_PLACEHOLDER,
  secretBindingVariable,
  secretParameterNames,
  stageSecretReader,
} from "./secrets";

const sst = { SST_APP: "toolbus", SST_STAGE: "dev", SST_SSM_PREFIX: "/sst/toolbus/dev/" };

/** A stand-in for SSM GetParameters that records what it was asked. */
function fakeSsm(values: Record<string, string>) {
  const calls: string[][] = [];
  const fetch: ParameterFetcher = async (names) => {
    calls.push(names);
    return {
      Parameters: names.filter((n) => n in values).map((n) => ({ Name: n, Value: values[n] })),
      InvalidParameters: names.filter((n) => !(n in values)),
    };
  };
  return { calls, fetch };
}

describe("secrets", () => {
  it("detects the secrets SST bound to a function by their placeholder", () => {
    expect(
      boundSecretNames({
        SST_Secret_value_SEARCH_API_KEY: SST_SECRET_PLACEHOLDER,
        SST_Secret_value_GITHUB_TOKEN: SST_SECRET_PLACEHOLDER,
        SST_Secret_value_RESOLVED: "a value sst bind injected",
        GITHUB_TOKEN: "plain",
      }),
    ).toEqual(["GITHUB_TOKEN", "SEARCH_API_KEY"]);
    expect(boundSecretNames({ GITHUB_TOKEN: "plain" })).toEqual([]);
    expect(secretBindingVariable("GITHUB_TOKEN")).toBe("SST_Secret_value_GITHUB_TOKEN");
  });

  it("names the stage's parameter and the app-wide fallback the way SST stores them", () => {
    expect(secretParameterNames("GITHUB_TOKEN", sst)).toEqual({
      stage: "/sst/toolbus/dev/Secret/GITHUB_TOKEN/value",
      fallback: "/sst/toolbus/.fallback/Secret/GITHUB_TOKEN/value",
    });
    expect(() => secretParameterNames("GITHUB_TOKEN", {})).toThrow(/SST_APP/);
  });

  it("reads plain environment variables locally, without asking SSM", async () => {
    const ssm = fakeSsm({});
    const env: NodeJS.ProcessEnv = { GITHUB_TOKEN: "ghp_local" };
    const secret = await loadSecrets(["GITHUB_TOKEN", "SEARCH_API_KEY"], env, { fetch: ssm.fetch });
    expect(secret("GITHUB_TOKEN")).toBe("ghp_local");
    expect(secret("SEARCH_API_KEY")).toBeUndefined();
    env.SEARCH_API_KEY = "set later";
    expect(secret("SEARCH_API_KEY")).toBe("set later");
    expect(ssm.calls).toEqual([]);
  });

  it("lets an environment variable override a bound secret", async () => {
    const ssm = fakeSsm({ "/sst/toolbus/dev/Secret/GITHUB_TOKEN/value": "from ssm" });
    const env = {
      ...sst,
      GITHUB_TOKEN: "override",
      [secretBindingVariable("GITHUB_TOKEN")]: SST_SECRET_PLACEHOLDER,
    };
    const secret = await loadSecrets(["GITHUB_TOKEN"], env, { fetch: ssm.fetch, cache: new Map() });
    expect(secret("GITHUB_TOKEN")).toBe("override");
    expect(ssm.calls).toEqual([]);
  });

  it("fetches bound secrets once per cold start, falling back to the app-wide value", async () => {
    const ssm = fakeSsm({
      "/sst/toolbus/dev/Secret/GITHUB_TOKEN/value": "ghp_stage",
      "/sst/toolbus/.fallback/Secret/SEARCH_API_KEY/value": "search_fallback",
    });
    const env = {
      ...sst,
      [secretBindingVariable("GITHUB_TOKEN")]: SST_SECRET_PLACEHOLDER,
      [secretBindingVariable("SEARCH_API_KEY")]: SST_SECRET_PLACEHOLDER,
      [secretBindingVariable("TOOLBUS_ADMIN_KEY")]: SST_SECRET_PLACEHOLDER,
    };
    const cache = new Map();
    const names = ["GITHUB_TOKEN", "SEARCH_API_KEY", "TOOLBUS_ADMIN_KEY", "NOT_BOUND"];
    const secret = await loadSecrets(names, env, { fetch: ssm.fetch, cache });
    expect(secret("GITHUB_TOKEN")).toBe("ghp_stage");
    expect(secret("SEARCH_API_KEY")).toBe("search_fallback");
    expect(secret("TOOLBUS_ADMIN_KEY")).toBeUndefined();
    expect(secret("NOT_BOUND")).toBeUndefined();
    expect(ssm.calls).toEqual([
      [
        "/sst/toolbus/dev/Secret/GITHUB_TOKEN/value",
        "/sst/toolbus/dev/Secret/SEARCH_API_KEY/value",
        "/sst/toolbus/dev/Secret/TOOLBUS_ADMIN_KEY/value",
      ],
      [
        "/sst/toolbus/.fallback/Secret/SEARCH_API_KEY/value",
        "/sst/toolbus/.fallback/Secret/TOOLBUS_ADMIN_KEY/value",
      ],
    ]);

    const again = await loadSecrets(names, env, { fetch: ssm.fetch, cache });
    expect(again("GITHUB_TOKEN")).toBe("ghp_stage");
    expect(ssm.calls).toHaveLength(2);
  });

  it("asks for at most ten parameters per call", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `SECRET_${i}`);
    const ssm = fakeSsm({});
    const env = {
      ...sst,
      ...Object.fromEntries(names.map((n) => [secretBindingVariable(n), SST_SECRET_PLACEHOLDER])),
    };
    await loadSecrets(names, env, { fetch: ssm.fetch, cache: new Map() });
    expect(ssm.calls.map((c) => c.length)).toEqual([10, 2, 10, 2]);
  });

  it("fails loudly when SSM cannot be read, and asks again next time", async () => {
    const env = { ...sst, [secretBindingVariable("GITHUB_TOKEN")]: SST_SECRET_PLACEHOLDER };
    const cache = new Map();
    const denied: ParameterFetcher = async () => {
      throw new Error("AccessDeniedException");
    };
    await expect(loadSecrets(["GITHUB_TOKEN"], env, { fetch: denied, cache })).rejects.toThrow(
      /Could not read the secrets GITHUB_TOKEN from SSM/,
    );
    const ssm = fakeSsm({ "/sst/toolbus/dev/Secret/GITHUB_TOKEN/value": "ghp_retry" });
    const secret = await loadSecrets(["GITHUB_TOKEN"], env, { fetch: ssm.fetch, cache });
    expect(secret("GITHUB_TOKEN")).toBe("ghp_retry");
  });

  it("reads and answers only TOOLSET_ secrets for registered toolsets, never the stage's others", async () => {
    const ssm = fakeSsm({
      "/sst/toolbus/dev/Secret/TOOLSET_ACME_KEY/value": "acme",
      "/sst/toolbus/dev/Secret/GITHUB_TOKEN/value": "ghp_stage",
    });
    // The function's own secrets: the admin key and a built-in tool's token.
    const own = (name: string) => ({ TOOLBUS_ADMIN_KEY: "admin", GITHUB_TOKEN: "ghp_own" })[name];
    const read = stageSecretReader(own, sst, { fetch: ssm.fetch, cache: new Map() });
    const secret = await read(["GITHUB_TOKEN", "TOOLSET_ACME_KEY", "TOOLBUS_ADMIN_KEY"]);
    expect(ssm.calls).toEqual([["/sst/toolbus/dev/Secret/TOOLSET_ACME_KEY/value"]]);
    expect(secret("TOOLSET_ACME_KEY")).toBe("acme");
    expect(secret("GITHUB_TOKEN")).toBeUndefined();
    expect(secret("TOOLBUS_ADMIN_KEY")).toBeUndefined();
  });
});
