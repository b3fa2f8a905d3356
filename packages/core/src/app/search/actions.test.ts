import { describe, expect, it } from "vitest";
import { actionAgreement, queryAction, toolAction } from "./actions";

describe("actions read from names and requests", () => {
  it("reads a tool's action from its first action word, in any case convention", () => {
    expect(toolAction("github_create_issue")).toBe("create");
    expect(toolAction("getFileInfo")).toBe("read");
    expect(toolAction("firecrawl_monitor_delete")).toBe("delete");
    expect(toolAction("list_records")).toBe("list");
    expect(toolAction("search_nodes")).toBe("search");
    expect(toolAction("update_field")).toBe("update");
    // Inflected forms meet the same stem.
    expect(toolAction("removes_labels")).toBe("delete");
    expect(toolAction("browser_tabs")).toBeUndefined();
  });

  it("reads a request's action from its first words only", () => {
    expect(queryAction("remove the test rows I added")).toBe("delete");
    expect(queryAction("rename the Notes column to Internal notes")).toBe("update");
    expect(queryAction("what did people say on the row?")).toBe("read");
    expect(queryAction("give me everything in the Tasks table")).toBe("list");
    // "delete" comes too late to be the request's action: it is context.
    expect(queryAction("I am tidying up and afterwards delete it")).toBeUndefined();
    expect(queryAction("")).toBeUndefined();
  });

  it("favours the same action, then its kind, and holds back another kind", () => {
    const same = actionAgreement("delete", "delete");
    const kind = actionAgreement("list", "search");
    const other = actionAgreement("delete", "create");
    expect(same).toBeGreaterThan(kind);
    expect(kind).toBeGreaterThan(1);
    expect(other).toBeLessThan(1);
    expect(actionAgreement(undefined, "create")).toBe(1);
    expect(actionAgreement("create", undefined)).toBe(1);
  });
});
