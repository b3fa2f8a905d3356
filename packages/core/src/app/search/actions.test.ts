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
    expect(toolAction("browser_tabs")).toBeUndefined();
  });

  it("matches words whole: a noun that looks like an action word states nothing", () => {
    expect(toolAction("brave_news_search")).toBe("search");
    expect(toolAction("posts_search")).toBe("search");
    expect(toolAction("settings_get")).toBe("read");
    expect(queryAction("latest news about the launch")).toBeUndefined();
  });

  it("reads a phrase before its first word", () => {
    expect(queryAction("get rid of the change alert for the old blog")).toBe("delete");
    expect(queryAction("set up a new tracker for interviews")).toBe("create");
    expect(queryAction("pull up record recA1b2C3")).toBe("read");
    expect(queryAction("get the latest refs")).toBe("read");
  });

  it("reads a request's action from its first words that are not stop words", () => {
    expect(queryAction("remove the test rows I added")).toBe("delete");
    expect(queryAction("rename the Notes column to Internal notes")).toBe("update");
    expect(queryAction("I would like to delete the file")).toBe("delete");
    expect(queryAction("could you please help me remove it")).toBe("delete");
    // A question reads.
    expect(queryAction("what did people say on the row?")).toBe("read");
    // "delete" comes after four words that say something: it is context, not the request.
    expect(queryAction("tidy the shared drive folder, then delete it")).toBeUndefined();
    expect(queryAction("")).toBeUndefined();
  });

  it("leaves out words that ask different things of different objects", () => {
    expect(queryAction("open notes/todo.md")).toBeUndefined();
    expect(queryAction("close the issue")).toBeUndefined();
    expect(toolAction("open_nodes")).toBeUndefined();
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
