import { describe, expect, it } from "vitest";
import { contentBlock, describeContent } from "./content";

describe("MCP content blocks", () => {
  it("accept each kind as a server sends it, keeping fields they do not name", () => {
    const blocks = [
      { type: "text", text: "hi", annotations: { priority: 1 } },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png", _meta: { x: 1 } },
      { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
      { type: "resource_link", uri: "file:///a.pdf", name: "a.pdf", size: 10 },
      { type: "resource", resource: { uri: "file:///a.md", text: "# A" } },
      { type: "resource", resource: { uri: "file:///a.bin", blob: "AAEC" } },
    ];
    for (const block of blocks) expect(contentBlock.parse(block)).toEqual(block);
  });

  it("refuse bytes that are not base64, a missing MIME type and an unknown kind", () => {
    expect(
      contentBlock.safeParse({ type: "image", data: "not base64!", mimeType: "image/png" }).success,
    ).toBe(false);
    expect(contentBlock.safeParse({ type: "audio", data: "UklGRg==" }).success).toBe(false);
    expect(contentBlock.safeParse({ type: "video", data: "AAAA" }).success).toBe(false);
    expect(contentBlock.safeParse({ type: "resource", resource: { uri: "x" } }).success).toBe(
      false,
    );
  });

  it("describe what is not text in one line a model can read", () => {
    expect(describeContent({ type: "image", data: "AAAA", mimeType: "image/png" })).toBe(
      "[image: image/png, 3 bytes]",
    );
    expect(describeContent({ type: "audio", data: "AAA=", mimeType: "audio/wav" })).toBe(
      "[audio: audio/wav, 2 bytes]",
    );
    expect(describeContent({ type: "resource", resource: { uri: "u", blob: "AA==" } })).toBe(
      "[resource u: 1 bytes]",
    );
  });
});
