import { describe, expect, it } from "vitest";
import { truncate } from "./text";

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
