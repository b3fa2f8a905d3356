import { describe, expect, it } from "vitest";
import { trustedStreamUrl } from "./http.js";

describe("which streaming URL the API may point the key at", () => {
  const api = "https://abc123.execute-api.eu-west-1.amazonaws.com";
  const functionUrl = "https://xyz789.lambda-url.eu-west-1.on.aws/";

  it("follows the stage's Function URL, and the API's own origin", () => {
    expect(trustedStreamUrl(api, functionUrl)).toBe(true);
    expect(trustedStreamUrl(api, `${api}/streams`)).toBe(true);
    expect(trustedStreamUrl("https://tools.example.com", functionUrl)).toBe(true);
  });

  it("follows loopback to loopback, as npm start and tests run", () => {
    expect(trustedStreamUrl("http://127.0.0.1:8787", "http://127.0.0.1:9999")).toBe(true);
    expect(trustedStreamUrl("http://localhost:8787", "http://127.0.0.1:9999")).toBe(true);
  });

  it("never sends the key down from https to http, nor to another host or scheme", () => {
    expect(trustedStreamUrl(api, "http://xyz789.lambda-url.eu-west-1.on.aws/")).toBe(false);
    expect(trustedStreamUrl(api, "https://attacker.example/")).toBe(false);
    expect(trustedStreamUrl(api, "https://lambda-url.eu-west-1.on.aws.attacker.example/")).toBe(
      false,
    );
    expect(trustedStreamUrl("http://127.0.0.1:8787", "http://10.0.0.5:8787")).toBe(false);
    expect(trustedStreamUrl(api, "ftp://xyz789.lambda-url.eu-west-1.on.aws/")).toBe(false);
    expect(trustedStreamUrl(api, "not a url")).toBe(false);
  });
});
