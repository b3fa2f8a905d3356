import { describe, expect, it } from "vitest";
import { decodeEntities, htmlToText, tokenizeHtml } from "./html";

describe("tokenizeHtml", () => {
  it("reads tags with quoted, unquoted and bare attributes, lowercasing names", () => {
    const tokens = [
      ...tokenizeHtml(`<A Class="x y" data-n=3 hidden href='/l/?a=1&amp;b=2'>Hi</A>`),
    ];
    expect(tokens).toEqual([
      {
        type: "open",
        name: "a",
        attrs: new Map([
          ["class", "x y"],
          ["data-n", "3"],
          ["hidden", ""],
          ["href", "/l/?a=1&b=2"],
        ]),
        selfClosing: false,
      },
      { type: "text", text: "Hi" },
      { type: "close", name: "a" },
    ]);
  });

  it("keeps a > inside a quoted attribute value and reads self-closing tags", () => {
    const tokens = [...tokenizeHtml(`<img alt="a > b" src=x.png/><br/>`)];
    expect(tokens[0]).toMatchObject({ type: "open", name: "img", selfClosing: false });
    expect(tokens[0]?.type === "open" && tokens[0].attrs.get("alt")).toBe("a > b");
    expect(tokens[1]).toMatchObject({ type: "open", name: "br", selfClosing: true });
  });

  it("skips comments, doctypes and script or style content", () => {
    const html = `<!DOCTYPE html><!-- <a class="result__a"> --><script>var s = "<div class='result'>";</script><style>.a>b{}</style><p>text</p>`;
    const names = [...tokenizeHtml(html)].map((t) => (t.type === "text" ? `#${t.text}` : t.name));
    expect(names).toEqual(["script", "script", "style", "style", "p", "#text", "p"]);
  });

  it("reads a stray < as text instead of failing", () => {
    const tokens = [...tokenizeHtml("1 < 2 and <3")];
    const text = tokens.map((t) => (t.type === "text" ? t.text : "")).join("");
    expect(text).toBe("1 < 2 and <3");
  });

  it("stops cleanly at an unterminated tag or comment", () => {
    expect([...tokenizeHtml(`<a href="x`)].every((t) => t.type === "text")).toBe(true);
    expect([...tokenizeHtml("before<!-- never closed")]).toEqual([
      { type: "text", text: "before" },
    ]);
  });
});

describe("decodeEntities", () => {
  it("decodes named, decimal and hex references", () => {
    expect(decodeEntities("Tom &amp; Jerry&#x27;s &#8220;show&#8221; &hellip;")).toBe(
      "Tom & Jerry's “show” …",
    );
  });

  it("leaves unknown names as written and replaces invalid code points", () => {
    expect(decodeEntities("&bogus; &#0; &#xD800; &#x110000;")).toBe("&bogus; \ufffd \ufffd \ufffd");
  });

  it("decodes once, so an escaped entity stays an entity", () => {
    expect(decodeEntities("&amp;lt;b&amp;gt;")).toBe("&lt;b&gt;");
  });

  it("does not treat inherited object keys as entity names", () => {
    expect(decodeEntities("&constructor; &toString;")).toBe("&constructor; &toString;");
  });
});

describe("htmlToText", () => {
  it("drops markup, decodes entities and collapses whitespace", () => {
    expect(htmlToText("  <strong>Zod</strong> is\n a <b>TypeScript</b>&#x27;s   lib<br>ok ")).toBe(
      "Zod is a TypeScript's lib ok",
    );
  });
});
