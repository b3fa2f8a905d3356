import { describe, expect, it } from "vitest";
import { collapseWhitespace, htmlToText } from "./html";

describe("htmlToText", () => {
  it("drops tags, scripts and styles and decodes references once", () => {
    expect(
      htmlToText(
        "<p>Caches&nbsp;are <b>hard</b>.</p><script>alert(1)</script><style>p{}</style><p>Tom &amp;amp; Jerry &#8230; &#x1F600; &bogus;</p>",
      ),
    ).toBe("Caches are hard. Tom &amp; Jerry … 😀 &bogus;");
  });

  it("keeps words of adjacent blocks apart and collapses whitespace", () => {
    expect(htmlToText("<li>one</li><li>two</li>\n\n  <br/>three")).toBe("one two three");
  });

  it("decodes every HTML named reference, not a short list", () => {
    expect(htmlToText("caf&eacute; &Ouml;l &frac12; &rarr; &NotSubset;")).toBe("café Öl ½ → ⊂⃒");
  });

  it("reads references that are not characters as the replacement character", () => {
    expect(htmlToText("a&#0;b &#xD800; &constructor;")).toBe("a\ufffdb \ufffd &constructor;");
  });

  it("treats everything after an unclosed script as script", () => {
    expect(htmlToText(`before <script>${"x<y ".repeat(1000)}`)).toBe("before");
  });

  it("reads a tag with an unclosed quote as markup, not as text that swallows the rest", () => {
    expect(htmlToText(`<a href="x>link</a> tail`)).toBe("");
    expect(htmlToText(`<p>one</p><a title='x>two`)).toBe("one");
  });
});

describe("collapseWhitespace", () => {
  it("drops control characters and replaces lone surrogates", () => {
    expect(collapseWhitespace(" a\u0000b \ud800 c\udc00 😀\u0007 ")).toBe("ab \ufffd c\ufffd 😀");
  });
});
