import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { newestFirst, parseFeed, referenceWork, SUMMARY_MAX_CHARS } from "./parse";

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

describe("parseFeed", () => {
  describe("RSS 2.0", () => {
    const feed = parseFeed(fixture("rss2.xml"), "https://blog.acme.dev/feed.xml");

    it("reads the channel and every item in document order", () => {
      expect(feed).toMatchObject({
        title: "Acme Engineering & Friends",
        link: "https://blog.acme.dev/",
        format: "rss2",
      });
      expect(feed?.items.map((i) => i.title)).toEqual([
        "Widget 2.3 is out",
        "It’s time to talk about <caching>",
        "Only a Dublin Core date",
        "A post with an unreadable date",
        "An item with no title: RSS allows that when there is a description.",
        "Second undated post",
      ]);
    });

    it("turns CDATA and escaped HTML descriptions into plain text", () => {
      expect(feed?.items[0]?.summary).toBe(
        "Widget 2.3 brings faster builds & a new plugin API. Read on for the details…",
      );
      expect(feed?.items[1]?.summary).toBe("Caches are hard. Here is why.");
      expect(feed?.items[2]?.summary).toBe("Plain text summary spread over several lines.");
    });

    it("reads pubDate in RFC 822 with zones and two-digit years, and dc:date", () => {
      expect(feed?.items.map((i) => i.published)).toEqual([
        "2025-03-04T01:00:00.000Z",
        "2025-03-04T08:15:00.000Z",
        "2025-02-28T17:30:00.000Z",
        undefined,
        "2024-12-01T10:00:00.000Z",
        undefined,
      ]);
    });

    it("resolves relative links, and uses a permalink guid when there is no link", () => {
      expect(feed?.items[2]?.link).toBe("https://blog.acme.dev/2025/02/dc-date");
      expect(feed?.items[4]?.link).toBe("https://blog.acme.dev/2024/12/notes");
      // isPermaLink="false": an id, never a link.
      expect(feed?.items[0]).toMatchObject({
        link: "https://blog.acme.dev/2025/03/widget-2-3",
        id: "https://blog.acme.dev/?p=812",
      });
    });

    it("never turns a relative guid into a link", () => {
      const relative = parseFeed(
        "<rss><channel><title>T</title><item><title>x</title><guid>12345</guid></item></channel></rss>",
        "https://blog.acme.dev/feed.xml",
      );
      expect(relative?.items[0]).toEqual({ title: "x", id: "12345" });
    });

    it("leaves out fields an item does not have", () => {
      expect(feed?.items[5]).toEqual({
        title: "Second undated post",
        link: "https://blog.acme.dev/2025/undated-2",
      });
    });
  });

  describe("Atom 1.0", () => {
    const feed = parseFeed(fixture("atom.xml"), "https://acme.dev/releases.atom");

    it("reads the feed title and its alternate link, not the self link", () => {
      expect(feed).toMatchObject({
        title: "Release notes — Acme Widget",
        link: "https://acme.dev/releases",
        format: "atom",
      });
    });

    it("reads entries: html titles and summaries, xhtml content, ids", () => {
      expect(feed?.items).toEqual([
        {
          title: "v2.2.0 stable",
          link: "https://acme.dev/releases/v2.2.0",
          published: "2025-01-15T06:00:00.250Z",
          summary: "Bug fixes and a --quiet flag.",
          id: "tag:acme.dev,2024:release-2.2.0",
        },
        {
          title: "v2.3.0",
          link: "https://acme.dev/releases/v2.3.0",
          published: "2025-03-02T10:00:00.000Z",
          summary: "Faster builds.",
          id: "tag:acme.dev,2024:release-2.3.0",
        },
        {
          title: "v2.1.0",
          link: "https://acme.dev/compare/v2.0.0...v2.1.0",
          published: "2024-11-20T00:00:00.000Z",
          summary: "A plain-text summary & nothing more <b>bold</b> stays literal.",
          id: "tag:acme.dev,2024:release-2.1.0",
        },
      ]);
    });

    it("reads a prefixed Atom document the same way", () => {
      const prefixed = parseFeed(
        `<a:feed xmlns:a="http://www.w3.org/2005/Atom"><a:title>P</a:title>
          <a:entry><a:title>One</a:title><a:link href="https://p.example/1"/>
          <a:updated>2024-01-01T00:00:00Z</a:updated></a:entry></a:feed>`,
      );
      expect(prefixed).toEqual({
        title: "P",
        format: "atom",
        items: [
          { title: "One", link: "https://p.example/1", published: "2024-01-01T00:00:00.000Z" },
        ],
      });
    });
  });

  it("decodes the five XML entities and character references in attributes too", () => {
    const feed = parseFeed(
      '<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><title>x</title>' +
        '<link href="https://a.example/?a=1&amp;b=2&#38;c=3"/></entry></feed>',
    );
    expect(feed?.items[0]?.link).toBe("https://a.example/?a=1&b=2&c=3");
  });

  describe("RSS 1.0 (RDF)", () => {
    const feed = parseFeed(fixture("rss1.xml"));

    it("reads the channel and the items beside it, with dc:date and rdf:about", () => {
      expect(feed).toEqual({
        title: "Example News",
        link: "https://news.example.org/",
        format: "rss1",
        items: [
          {
            title: "Older headline",
            link: "https://news.example.org/older",
            published: "2024-06-01T00:00:00.000Z",
            summary: "Something happened in June.",
            id: "https://news.example.org/older",
          },
          {
            title: "Newer headline",
            link: "https://news.example.org/newer",
            published: "2024-07-04T18:30:00.000Z",
            summary: "Fireworks, lots of them.",
            id: "https://news.example.org/newer",
          },
        ],
      });
    });
  });

  describe("safety", () => {
    it("does not expand DOCTYPE entities (billion laughs): output stays small", () => {
      const xml = fixture("billion-laughs.xml");
      const before = { ...referenceWork };
      const feed = parseFeed(xml);
      // Expanded, &lol9; alone is three billion characters. Read once each, and only ever
      // shortened by decoding, the document's references cost at most its own size.
      const read = referenceWork.read - before.read;
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThanOrEqual(xml.length);
      expect(referenceWork.written - before.written).toBeLessThanOrEqual(read);
      expect(feed?.format).toBe("rss2");
      expect(JSON.stringify(feed).length).toBeLessThan(1_000);
      expect(JSON.stringify(feed)).not.toContain("lollol");
      // Declared entities stay as written; the five XML entities still decode.
      expect(feed?.title).toBe("Laughs &lol9;");
      expect(feed?.items[0]?.title).toBe("&lol9;&lol9;&lol9;");
      expect(feed?.items[0]?.summary).toBe("&lol9; &greeting; & goodbye");
    });

    it("decodes a laughing feed's references in work that grows with its items, not faster", () => {
      const xml = fixture("billion-laughs.xml");
      const item = xml.slice(xml.indexOf("<item>"), xml.indexOf("</item>") + "</item>".length);
      const workFor = (items: number) => {
        const before = { ...referenceWork };
        expect(parseFeed(xml.replace(item, item.repeat(items)))?.items).toHaveLength(items);
        return {
          read: referenceWork.read - before.read,
          written: referenceWork.written - before.written,
        };
      };
      const once = workFor(100);
      const twice = workFor(200);
      expect(once.written).toBeLessThanOrEqual(once.read);
      expect(twice.written).toBeLessThanOrEqual(twice.read);
      // Twice the items, at most twice the work (the channel's share is paid once).
      expect(twice.read).toBeGreaterThan(once.read);
      expect(twice.read).toBeLessThanOrEqual(2 * once.read);
    });

    it("refuses external entities instead of reading files or URLs", () => {
      const xxe = `<?xml version="1.0"?>
        <!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
        <rss version="2.0"><channel><title>&xxe;</title></channel></rss>`;
      const feed = parseFeed(xxe);
      expect(JSON.stringify(feed ?? {})).not.toMatch(/root:/);
    });

    it.each(["__proto__", "constructor", "prototype"])(
      "refuses a document with %s elements and pollutes nothing",
      (name) => {
        const feed = parseFeed(
          `<rss><channel><title>T</title><item><title>x</title><${name}><polluted>y</polluted></${name}></item></channel></rss>`,
        );
        expect(feed).toBeUndefined();
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      },
    );

    it("reads elements named like other Object members as plain data", () => {
      const feed = parseFeed(
        "<rss><channel><title>T</title><item><title>x</title><toString>z</toString><hasOwnProperty>w</hasOwnProperty></item></channel></rss>",
      );
      expect(feed?.items).toEqual([{ title: "x" }]);
    });

    it("drops links that are not http(s)", () => {
      const feed = parseFeed(
        "<rss><channel><title>T</title><item><title>x</title><link>javascript:alert(1)</link></item></channel></rss>",
      );
      expect(feed?.items[0]).toEqual({ title: "x" });
    });

    it("truncates long summaries", () => {
      const long = "word ".repeat(400);
      const feed = parseFeed(
        `<rss><channel><title>T</title><item><title>x</title><description>${long}</description></item></channel></rss>`,
      );
      const summary = feed?.items[0]?.summary ?? "";
      expect(summary.length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
      expect(summary.endsWith("…")).toBe(true);
    });
  });

  describe("text as feeds write it", () => {
    const atom = (entry: string) =>
      `<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry>${entry}</entry></feed>`;

    it("reads Atom xhtml text in document order, inline elements joining words", () => {
      const feed = parseFeed(
        atom(
          '<title type=" xhtml "><div xmlns="http://www.w3.org/1999/xhtml">Hello <b>brave</b> new <i>world</i></div></title>' +
            '<summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>One <em>two</em></p><p>three</p></div></summary>',
        ),
      );
      expect(feed?.items[0]).toMatchObject({
        title: "Hello brave new world",
        summary: "One two three",
      });
    });

    it("decodes HTML named references beyond a short list, in every text construct", () => {
      const feed = parseFeed(
        atom(
          "<title>Caf&eacute; cr&egrave;me</title>" +
            '<summary type="html">&lt;p&gt;&amp;frac12; off &amp;rarr; now&lt;/p&gt;</summary>',
        ),
      );
      expect(feed?.items[0]).toMatchObject({ title: "Café crème", summary: "½ off → now" });
    });

    it("decodes once: an escaped reference in text stays a reference", () => {
      const feed = parseFeed(atom("<title>Write &amp;eacute; for é</title>"));
      expect(feed?.items[0]?.title).toBe("Write &eacute; for é");
    });

    it("drops everything after a script that is never closed, like a browser", () => {
      const script = `<script>${"var a = '<p>x</p>';".repeat(200)}`;
      const feed = parseFeed(
        `<rss><channel><title>T</title><item><title>x</title><description><![CDATA[Visible words ${script}]]></description></item></channel></rss>`,
      );
      expect(feed?.items[0]?.summary).toBe("Visible words");
    });
  });

  describe("not a feed", () => {
    it.each([
      ["an HTML page", fixture("not-a-feed.html")],
      ["JSON", '{"items":[{"title":"x"}]}'],
      ["plain text", "Service temporarily unavailable"],
      ["an empty body", ""],
      ["truncated XML", '<rss version="2.0"><channel><title>Cut</title><item><title>x'],
      [
        "XML of another kind",
        '<?xml version="1.0"?><urlset><url><loc>https://a.example/</loc></url></urlset>',
      ],
      ["an rss root without a channel", "<rss><title>No channel</title></rss>"],
      ["a feed element of another namespace", '<feed xmlns="urn:example:other"><entry/></feed>'],
    ])("returns undefined for %s", (_, body) => {
      expect(parseFeed(body)).toBeUndefined();
    });

    it("still reads a feed whose only fault is a bare ampersand", () => {
      const feed = parseFeed(
        "<rss><channel><title>Tom & Jerry</title><item><title>Q&A</title><link>https://x.example/?a=1&b=2</link></item></channel></rss>",
      );
      expect(feed?.title).toBe("Tom & Jerry");
      expect(feed?.items[0]).toEqual({ title: "Q&A", link: "https://x.example/?a=1&b=2" });
    });
  });
});

describe("newestFirst", () => {
  it("orders dated items newest first and keeps undated ones last in document order", () => {
    const feed = parseFeed(fixture("rss2.xml"), "https://blog.acme.dev/feed.xml");
    expect(newestFirst(feed?.items ?? []).map((i) => i.title)).toEqual([
      "It’s time to talk about <caching>",
      "Widget 2.3 is out",
      "Only a Dublin Core date",
      "An item with no title: RSS allows that when there is a description.",
      "A post with an unreadable date",
      "Second undated post",
    ]);
  });

  it("is stable for items with the same date", () => {
    const same = "2024-01-01T00:00:00.000Z";
    const items = ["a", "b", "c"].map((title) => ({ title, published: same }));
    expect(newestFirst(items).map((i) => i.title)).toEqual(["a", "b", "c"]);
  });
});
