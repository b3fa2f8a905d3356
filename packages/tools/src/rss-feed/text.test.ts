import { describe, expect, it } from "vitest";
import { htmlToText, truncate } from "./text";

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

  it("ignores references that are not characters", () => {
    expect(htmlToText("&#0; &#xD800; &#99999999; &constructor;")).toBe(
      "&#0; &#xD800; &#99999999; &constructor;",
    );
  });
});

describe("truncate", () => {
  it("leaves short text alone", () => {
    expect(truncate("short", 10)).toBe("short");
  });

  it("cuts at a word boundary and marks the cut", () => {
    const cut = truncate("The quick brown fox jumps over the lazy dog", 20);
    expect(cut).toBe("The quick brown fox…");
    expect(cut.length).toBeLessThanOrEqual(20);
  });
});
