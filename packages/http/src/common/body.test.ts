import { describe, expect, it } from "vitest";
import { jsonDepth } from "./body";

const depth = (text: string) => jsonDepth(Buffer.from(text, "utf8"));

describe("jsonDepth", () => {
  it("counts the deepest nesting of arrays and objects", () => {
    expect(depth("1")).toBe(0);
    expect(depth('{"a":[1,{"b":[]}],"c":{}}')).toBe(4);
    expect(depth(`${"[".repeat(10_000)}${"]".repeat(10_000)}`)).toBe(10_000);
  });

  it("skips brackets inside strings, escaped quotes included", () => {
    expect(depth('{"a":"[[[{{{"}')).toBe(1);
    expect(depth('["\\"[[[", "\\\\", [1]]')).toBe(2);
  });

  it("reads UTF-8 text with characters beyond ASCII", () => {
    expect(depth('{"東京":["😀",["é"]]}')).toBe(3);
  });
});
