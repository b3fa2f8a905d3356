import { describe, expect, it } from "vitest";
import { parseJavaMajorVersion } from "./java";

describe("parseJavaMajorVersion", () => {
  it.each([
    ['openjdk version "17.0.15" 2025-04-15', 17],
    ['openjdk version "21" 2023-09-19', 21],
    ['java version "1.8.0_392"', 8],
  ])("reads the major version from %s", (banner, major) => {
    expect(parseJavaMajorVersion(banner)).toBe(major);
  });

  it("returns undefined for output that carries no version", () => {
    expect(parseJavaMajorVersion("Picked up JAVA_TOOL_OPTIONS")).toBeUndefined();
  });
});
