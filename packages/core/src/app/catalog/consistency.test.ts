import { type ToolSpec, type ToolsetSpec, toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { ConflictError, ValidationError } from "../../errors";
import { checkToolRegistration, validateCatalog } from "./consistency";

const toolset = (name: string, owner: string): ToolsetSpec => ({
  name,
  owner,
  description: `${name} tools`,
  kind: "builtin",
});
const tool = (id: string, set: string): ToolSpec =>
  toolSpec.parse({
    id,
    toolset: set,
    title: id,
    description: "d",
    category: "utility",
    usageHint: "u",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
  });

describe("tool registration", () => {
  const catalog = {
    toolsets: [toolset("search", "acme"), toolset("other", "globex")],
    tools: [tool("web_search", "search")],
  };

  it("refuses a tool id another toolset owns, naming both toolsets and owners", () => {
    const attempt = () => checkToolRegistration(tool("web_search", "other"), catalog);
    expect(attempt).toThrow(ConflictError);
    expect(attempt).toThrow(
      /web_search.*toolset search \(owner acme\).*toolset other \(owner globex\)/,
    );
  });

  it("lets a toolset update its own tool", () => {
    expect(() => checkToolRegistration(tool("web_search", "search"), catalog)).not.toThrow();
  });

  it("refuses a tool whose toolset is not registered", () => {
    expect(() => checkToolRegistration(tool("x", "nowhere"), catalog)).toThrow(ValidationError);
  });
});

describe("catalog validation", () => {
  it("names every clash: duplicate toolsets, duplicate tool ids and unknown toolsets", () => {
    const attempt = () =>
      validateCatalog(
        [toolset("a", "o1"), toolset("a", "o2"), toolset("b", "o3")],
        [tool("t", "a"), tool("t", "b"), tool("u", "missing")],
      );
    expect(attempt).toThrow(/Toolset a is declared twice \(owners o1 and o2\)/);
    expect(attempt).toThrow(
      /Tool id t is declared by toolset a \(owner o2\) and by toolset b \(owner o3\)/,
    );
    expect(attempt).toThrow(/Tool u names toolset missing/);
  });
});
