import { describe, expect, it } from "vitest";
import { expandUrlTemplate, parseUrlTemplate } from "./url-template";

describe("URL templates of http tools", () => {
  it("fill path placeholders as single encoded segments and query placeholders as values", () => {
    const { url, rest } = expandUrlTemplate(
      "https://api.example/v1/{owner}/items?state={state}&per_page=10",
      { owner: "a b/c", state: "open", extra: true },
    );
    expect(url.toString()).toBe("https://api.example/v1/a%20b%2Fc/items?state=open&per_page=10");
    expect(rest).toEqual({ extra: true });
  });

  it("leave out a query parameter whose field is absent and repeat one for an array", () => {
    const template = "https://api.example/s?q={q}&tag={tags}";
    expect(expandUrlTemplate(template, {}).url.search).toBe("");
    expect(expandUrlTemplate(template, { q: "x", tags: ["a", "b"] }).url.search).toBe(
      "?q=x&tag=a&tag=b",
    );
  });

  it.each([
    ["https://{host}/x", /scheme or host/],
    ["https://api.example:{port}/x", /scheme or host/],
    ["ftp://api.example/x", /absolute/],
    ["https://user:pw@api.example/x", /credentials/],
    ["https://api.example/{a}/{a}", /used twice/],
    ["https://api.example/x?q=pre{a}", /whole value/],
    ["https://api.example/x#{a}", /fragment/],
  ])("refuse %s", (template, message) => {
    expect(() => parseUrlTemplate(template)).toThrow(message);
  });

  it.each([".", "..", "%2e%2E", ""])(
    "refuse the path value %j, which would not stay a segment",
    (id) => {
      expect(() => expandUrlTemplate("https://api.example/items/{id}", { id })).toThrow();
    },
  );

  it("refuse an object where a path segment goes", () => {
    expect(() => expandUrlTemplate("https://api.example/items/{id}", { id: { a: 1 } })).toThrow(
      /string, number or boolean/,
    );
  });
});
