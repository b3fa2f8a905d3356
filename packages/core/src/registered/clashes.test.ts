import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { clashError, freeToolsetName, idClashes } from "./clashes";

const toolset = { name: "srv", owner: "team", kind: "mcp" as const };
const catalogOf = (ids: Record<string, string>) => ({
  toolsets: [...new Set(Object.values(ids))].map(
    (name) => ({ name, owner: `owner-${name}`, kind: "builtin", description: "d" }) as ToolsetSpec,
  ),
  tools: Object.entries(ids).map(([id, set]) => ({ id, toolset: set }) as ToolSpec),
});

describe("every clash of a registration's names", () => {
  it("lists each taken, repeated and unusable id with a free, valid, distinct suggestion", () => {
    const catalog = catalogOf({ search: "web", srv_search: "web", get_x: "other" });
    const clashes = idClashes({
      toolset,
      catalog,
      claims: [
        { id: "search", path: "renames.search", remoteName: "search" },
        { id: "get_x", path: "renames.getX", remoteName: "getX" },
        { id: "get_x", path: "renames.get-x", remoteName: "get-x" },
        { id: "", path: "renames.9", remoteName: "9" },
        { id: "fine", path: "renames.fine", remoteName: "fine" },
      ],
    });
    expect(clashes.map((clash) => [clash.path, clash.suggestion])).toEqual([
      // srv_search is taken too: the next free name.
      ["renames.search", "srv_search_2"],
      ["renames.getX", "srv_get_x"],
      ["renames.get-x", "srv_get_x_2"],
      ["renames.9", "srv_tool_4"],
    ]);
    expect(clashes[1]?.message).toMatch(
      /already registered by toolset other \(owner owner-other\)/,
    );
    expect(clashes[2]?.message).toMatch(/"getX" and "get-x" would both be get_x/);
  });

  it("keeps a suggestion within 48 characters, and a toolset's own ids are its own", () => {
    const long = "a".repeat(40);
    const id = `b${"c".repeat(47)}`;
    const catalog = catalogOf({ [id]: "other", mine: long });
    const clashes = idClashes({
      toolset: { ...toolset, name: long },
      catalog,
      claims: [
        { id, path: "tools.0.id" },
        { id: "mine", path: "tools.1.id" },
      ],
    });
    expect(clashes).toHaveLength(1);
    expect(clashes[0]?.suggestion).toMatch(/^[a-z][a-z0-9_]{0,47}$/);
    expect(clashes[0]?.suggestion).toBe(`${id.slice(0, 46)}_2`);
    // Unless the name is someone else's: then its ids are not this registration's either.
    expect(
      idClashes({
        toolset: { ...toolset, name: long },
        catalog,
        claims: [{ id: "mine", path: "tools.0.id" }],
        nameTaken: true,
      }),
    ).toHaveLength(1);
  });

  it("suggests a free toolset name, and is a 409 only when the name is taken", () => {
    const catalog = catalogOf({ a: "github", b: "github_mcp" });
    expect(freeToolsetName("github", "mcp", catalog, new Set())).toBe("github_mcp_2");
    expect(freeToolsetName("github", "http", catalog, new Set())).toBe("github_http");
    const clash = { path: "name", message: "Taken.", suggestion: "x" };
    expect(clashError([clash], true)).toMatchObject({ status: 409, message: "Taken." });
    expect(clashError([clash, clash], false)).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^Taken\. \(2 names clash in all/),
    });
  });
});
