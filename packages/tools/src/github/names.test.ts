import { describe, expect, it } from "vitest";
import { encodePath, gitRef, isValidRef, ownerName, repoName, repoPath } from "./names";

describe("ownerName", () => {
  it.each([
    "octocat",
    "nodejs",
    "a",
    "Microsoft",
    "web-platform-tests",
    "x".repeat(39),
    "old--name",
  ])("accepts %s", (name) => {
    expect(ownerName.safeParse(name).success).toBe(true);
  });

  it.each([
    ["empty", ""],
    ["a leading hyphen", "-octocat"],
    ["a trailing hyphen", "octocat-"],
    ["an underscore", "octo_cat"],
    ["a dot", "octo.cat"],
    ["a slash", "octo/cat"],
    ["40 characters", "x".repeat(40)],
    ["a space", "octo cat"],
  ])("rejects a name with %s", (_, name) => {
    expect(ownerName.safeParse(name).success).toBe(false);
  });
});

describe("repoName", () => {
  it.each(["Hello-World", "node", "vitest.dev", "_private", "a.b-c_d", "x".repeat(100)])(
    "accepts %s",
    (name) => {
      expect(repoName.safeParse(name).success).toBe(true);
    },
  );

  it.each([".", "..", "", "a/b", "a b", "x".repeat(101), "repo?", "ré"])("rejects %j", (name) => {
    expect(repoName.safeParse(name).success).toBe(false);
  });
});

describe("repoPath", () => {
  it.each([
    "README.md",
    "src/index.ts",
    ".github/workflows/ci.yml",
    "docs/a b/c.md",
    "..foo/bar..",
    "a/.../b",
  ])("accepts %s", (path) => {
    expect(repoPath.safeParse(path).success).toBe(true);
  });

  it.each([
    ["../etc/passwd", "path must not contain .. segments"],
    ["src/../../secrets", "path must not contain .. segments"],
    ["src/..", "path must not contain .. segments"],
    ["/etc/passwd", "path must be relative to the repository root, without a leading /"],
    ["src\\index.ts", "path must separate folders with /, not \\"],
    ["src//index.ts", "path must not contain empty or . segments (no // and no trailing /)"],
    ["src/", "path must not contain empty or . segments (no // and no trailing /)"],
    ["./src", "path must not contain empty or . segments (no // and no trailing /)"],
    ["src/\u0000.ts", "path must not contain control characters"],
  ])("refuses %j", (path, message) => {
    const result = repoPath.safeParse(path);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(message);
  });

  it("caps the length at 1,000 characters", () => {
    expect(repoPath.safeParse("a".repeat(1000)).success).toBe(true);
    expect(repoPath.safeParse("a".repeat(1001)).success).toBe(false);
  });
});

describe("gitRef", () => {
  it.each([
    "main",
    "v1.2.3",
    "release/2024-05",
    "feature/x_y",
    "3d21ec53a331a6f037a91c368710b99387d012c1",
    "@v1",
  ])("accepts %s", (ref) => {
    expect(isValidRef(ref)).toBe(true);
  });

  it.each([
    "a..b",
    "with space",
    "tilde~1",
    "caret^",
    "colon:x",
    "what?",
    "star*",
    "[bracket",
    "back\\slash",
    "/leading",
    "trailing/",
    "double//slash",
    "ends.",
    "branch.lock",
    "@",
    "x@{1}",
    ".hidden",
    "dir/.hidden",
    "tab\tref",
  ])("refuses %j", (ref) => {
    expect(isValidRef(ref)).toBe(false);
    expect(gitRef.safeParse(ref).success).toBe(false);
  });
});

describe("encodePath", () => {
  it("escapes each segment and keeps the slashes", () => {
    expect(encodePath("docs/a b/#1?.md")).toBe("docs/a%20b/%231%3F.md");
  });
});
