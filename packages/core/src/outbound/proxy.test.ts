import { describe, expect, it } from "vitest";
import { OutboundError } from "./errors";
import { noProxyMatcher, proxyChoice } from "./proxy";

const via = (choice: ReturnType<typeof proxyChoice>, url: string) => choice(new URL(url));

describe("proxyChoice", () => {
  it("goes direct with nothing set, or with outbound.proxy false whatever the environment says", () => {
    expect(via(proxyChoice(undefined, {}), "https://example.com/")).toBeUndefined();
    const env = { HTTPS_PROXY: "http://env.test:3128", HTTP_PROXY: "http://env.test:3128" };
    expect(via(proxyChoice(false, env), "https://example.com/")).toBeUndefined();
    expect(via(proxyChoice(false, env), "http://example.com/")).toBeUndefined();
  });

  it("uses the stage's proxy for both schemes, ignoring every variable", () => {
    const choice = proxyChoice(
      { url: "http://stage.test:3128", noProxy: ["internal.corp"] },
      { HTTPS_PROXY: "http://env.test:8080", NO_PROXY: "example.com" },
    );
    expect(via(choice, "https://example.com/")).toMatchObject({
      address: "stage.test:3128",
      hostname: "stage.test",
      port: 3128,
      source: "config:outbound.proxy",
    });
    expect(via(choice, "http://example.com/")).toMatchObject({ address: "stage.test:3128" });
    expect(via(choice, "https://api.internal.corp/")).toBeUndefined();
  });

  it("reads each scheme's own variable, lower-case first, empty meaning unset", () => {
    const choice = proxyChoice(undefined, {
      https_proxy: "http://lower.test:1",
      HTTPS_PROXY: "http://upper.test:2",
      http_proxy: "",
      HTTP_PROXY: "http://plain.test:3",
    });
    expect(via(choice, "https://example.com/")).toMatchObject({
      address: "lower.test:1",
      source: "env:https_proxy",
    });
    expect(via(choice, "http://example.com/")).toMatchObject({
      address: "plain.test:3",
      source: "env:HTTP_PROXY",
    });
    // No fallback from one scheme's variable to the other's.
    expect(via(proxyChoice(undefined, { HTTP_PROXY: "http://p.test:3" }), "https://a.test/")).toBe(
      undefined,
    );
  });

  it("reads NO_PROXY and no_proxy, lower-case first", () => {
    const env = { HTTPS_PROXY: "http://p.test:3128", NO_PROXY: "a.test", no_proxy: "b.test" };
    expect(via(proxyChoice(undefined, env), "https://b.test/")).toBeUndefined();
    expect(via(proxyChoice(undefined, env), "https://a.test/")).toBeDefined();
  });

  it("reads a proxy without a scheme as http, defaults the port to 80, and keeps IPv6 brackets in the address", () => {
    const env = { HTTPS_PROXY: "proxy.test:3128", HTTP_PROXY: "http://[::1]" };
    expect(via(proxyChoice(undefined, env), "https://a.test/")).toMatchObject({
      address: "proxy.test:3128",
    });
    expect(via(proxyChoice(undefined, env), "http://a.test/")).toMatchObject({
      address: "[::1]:80",
      hostname: "::1",
      port: 80,
    });
  });

  it("turns credentials into Basic Proxy-Authorization, decoded, and keeps them out of the address", () => {
    const route = via(
      proxyChoice({ url: "http://us%40er:p%3Ass@proxy.test:3128" }, {}),
      "https://a.test/",
    );
    expect(route).toMatchObject({
      address: "proxy.test:3128",
      authorization: `Basic ${Buffer.from("us@er:p:ss").toString("base64")}`,
    });
  });

  it("fails requests that would use an unusable variable, naming the variable and not its value", () => {
    const choice = proxyChoice(undefined, {
      HTTPS_PROXY: "https://user:secret@proxy.test",
      http_proxy: "http://",
    });
    const thrown = (url: string) => {
      try {
        via(choice, url);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const https = thrown("https://a.test/");
    expect(https).toBeInstanceOf(OutboundError);
    expect(https).toMatchObject({
      kind: "network",
      message: "the proxy setting (env:HTTPS_PROXY) must be an http:// URL",
    });
    expect(JSON.stringify((https as OutboundError).context)).not.toContain("secret");
    expect(thrown("http://a.test/")).toMatchObject({
      message: "the proxy setting (env:http_proxy) is not a URL",
    });
  });
});

describe("noProxyMatcher", () => {
  const direct = (entries: string[], url: string) => noProxyMatcher(entries)(new URL(url));

  it("matches a name and its subdomains, with or without a leading dot or *.", () => {
    for (const entry of ["corp.test", ".corp.test", "*.corp.test", "CORP.test."]) {
      expect(direct([entry], "https://corp.test/"), entry).toBe(true);
      expect(direct([entry], "https://api.corp.test/"), entry).toBe(true);
      expect(direct([entry], "https://notcorp.test/"), entry).toBe(false);
      expect(direct([entry], "https://corp.test.evil/"), entry).toBe(false);
    }
  });

  it("matches `*`, ports, addresses and CIDR ranges of address literals", () => {
    expect(direct(["*"], "https://anything.test/")).toBe(true);
    expect(direct(["a.test:8443"], "https://a.test:8443/")).toBe(true);
    expect(direct(["a.test:8443"], "https://a.test/")).toBe(false);
    expect(direct(["a.test:443"], "https://a.test/")).toBe(true);
    expect(direct(["10.0.0.0/8"], "http://10.1.2.3/")).toBe(true);
    expect(direct(["10.0.0.0/8"], "http://11.1.2.3/")).toBe(false);
    expect(direct(["127.0.0.1"], "http://127.0.0.1:8080/")).toBe(true);
    expect(direct(["::1"], "http://[::1]:8080/")).toBe(true);
    expect(direct(["[::1]:8080"], "http://[::1]:8080/")).toBe(true);
    expect(direct(["fd00::/8"], "http://[fd12::1]/")).toBe(true);
    // Names are not resolved: a range matches address literals only.
    expect(direct(["127.0.0.0/8"], "http://localhost/")).toBe(false);
  });

  it("ignores blank and malformed entries", () => {
    expect(direct(["", "  ", "10.0.0.0/99", "/"], "http://10.0.0.1/")).toBe(false);
    expect(direct([], "http://a.test/")).toBe(false);
  });
});
