import { describe, expect, it } from "vitest";
import { SseParser } from "./sse.js";

describe("SseParser", () => {
  it("dispatches a message on a blank line with its event, data and id", () => {
    const parser = new SseParser();
    expect(parser.push('event: ToolCallScheduled\ndata: {"a":1}\nid: c1\n\n')).toEqual([
      { event: "ToolCallScheduled", data: '{"a":1}', id: "c1" },
    ]);
  });

  it("joins data lines, defaults the event to message and strips one leading space", () => {
    const parser = new SseParser();
    expect(parser.push("data:one\ndata:  two\n\n")).toEqual([
      { event: "message", data: "one\n two" },
    ]);
  });

  it("reads messages split anywhere across chunks, CRLF split included", () => {
    const text = "event: e\r\ndata: x\r\nid: 7\r\n\r\ndata: y\r\n\r\n";
    for (let size = 1; size <= text.length; size++) {
      const parser = new SseParser();
      const messages = [];
      for (let at = 0; at < text.length; at += size) {
        messages.push(...parser.push(text.slice(at, at + size)));
      }
      messages.push(...parser.end());
      expect(messages).toEqual([
        { event: "e", data: "x", id: "7" },
        { event: "message", data: "y" },
      ]);
    }
  });

  it("accepts lone CR line endings", () => {
    const parser = new SseParser();
    expect([...parser.push("data: a\r\r"), ...parser.end()]).toEqual([
      { event: "message", data: "a" },
    ]);
  });

  it("counts comments and ignores unknown fields", () => {
    const parser = new SseParser();
    expect(parser.push(": keep-alive\n\nfoo: bar\ndata: z\n\n")).toEqual([
      { event: "message", data: "z" },
    ]);
    expect(parser.comments).toBe(1);
  });

  it("reports id and retry of a block without data, which is no event", () => {
    const parser = new SseParser();
    expect(parser.push("id: 9\nretry: 1500\n\nretry: soon\n\n")).toEqual([
      { event: "message", id: "9", retry: 1500 },
    ]);
  });

  it("ignores an id containing NUL and discards an unterminated message at the end", () => {
    const parser = new SseParser();
    expect(parser.push("id: a\u0000b\ndata: x\n\ndata: cut")).toEqual([
      { event: "message", data: "x" },
    ]);
    expect(parser.end()).toEqual([]);
  });
});
