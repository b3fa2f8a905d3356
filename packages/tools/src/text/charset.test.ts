import { describe, expect, it } from "vitest";
import { decodeDocument } from "./charset";

/** "日本語のページ" in Shift_JIS. */
const SHIFT_JIS = [
  0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea, 0x82, 0xcc, 0x83, 0x79, 0x81, 0x5b, 0x83, 0x57,
];
/** "Привет" in windows-1251. */
const WINDOWS_1251 = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2];

function bytes(...parts: (string | number[])[]): Uint8Array {
  return Uint8Array.from(
    parts.flatMap((part) => (typeof part === "string" ? [...Buffer.from(part, "latin1")] : part)),
  );
}

describe("decodeDocument", () => {
  it("uses the charset the content-type header names", () => {
    expect(decodeDocument(bytes(SHIFT_JIS), "text/html; charset=Shift_JIS", "html")).toBe(
      "日本語のページ",
    );
  });

  it("finds an HTML page's own <meta charset> when the header names none", () => {
    const page = bytes('<html><head><meta charset="windows-1251"></head><body>', WINDOWS_1251);
    expect(decodeDocument(page, "text/html", "html")).toContain("Привет");
  });

  it("finds the http-equiv form of the meta declaration", () => {
    const page = bytes(
      '<meta http-equiv="Content-Type" content="text/html; charset=shift_jis">',
      SHIFT_JIS,
    );
    expect(decodeDocument(page, null, "html")).toContain("日本語のページ");
  });

  it("reads an XML declaration's encoding", () => {
    const feed = bytes('<?xml version="1.0" encoding="windows-1251"?><rss>', WINDOWS_1251);
    expect(decodeDocument(feed, "application/xml", "xml")).toContain("Привет");
  });

  it("prefers the header to the document, and a byte order mark to both", () => {
    const feed = bytes('<?xml version="1.0" encoding="windows-1251"?>', SHIFT_JIS);
    expect(decodeDocument(feed, "text/xml; charset=shift_jis", "xml")).toContain("日本語");
    const marked = bytes([0xef, 0xbb, 0xbf], "caf", [0xc3, 0xa9]);
    expect(decodeDocument(marked, "text/html; charset=windows-1251", "html")).toBe("café");
  });

  it("falls back to UTF-8 for unknown labels and for a document claiming UTF-16", () => {
    const utf8 = bytes('<meta charset="utf-16">caf', [0xc3, 0xa9]);
    expect(decodeDocument(utf8, "text/html; charset=no-such-thing", "html")).toContain("café");
  });
});
