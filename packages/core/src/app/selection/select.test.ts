import { CATEGORIES, type ToolSpec, type ToolSpecInput, toolSpec } from "@toolbus/wire/model/tool";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../errors";
import { select } from "./select";

const config = {
  roles: ["viewer", "member", "admin"],
  modes: { default: "draft", available: ["draft", "review"] },
};

function tool(id: string, overrides: Partial<ToolSpecInput> = {}): ToolSpec {
  return toolSpec.parse({
    id,
    toolset: "fixture",
    title: `Tool ${id}`,
    description: "A fixture tool.",
    category: "utility",
    usageHint: "In tests.",
    inputSchema: { type: "object" },
    outputSchema: { type: "object" },
    ...overrides,
  });
}

const status = (name: string, available: boolean) => ({
  name,
  available,
  checkedAt: "2024-01-01T00:00:00.000Z",
});

// The fixture catalog: one tool per combination of the availability settings that matter.
const MODE_SETTINGS = [undefined, ["draft"], ["review"], ["draft", "review"]] as const;
const MIN_ROLES = [undefined, "viewer", "member", "admin", "ghost"] as const;
const REQUIRES = [[], ["github_token"], ["github_token", "network"]] as const;
const ENABLED = [true, false] as const;

const catalog: ToolSpec[] = [];
for (const modes of MODE_SETTINGS) {
  for (const minRole of MIN_ROLES) {
    for (const requires of REQUIRES) {
      for (const enabled of ENABLED) {
        const n = catalog.length;
        catalog.push(
          tool(`tool_${String(n).padStart(3, "0")}`, {
            // Categories cycle so the output order is not simply the id order.
            category: CATEGORIES[(n * 3) % CATEGORIES.length],
            requires: [...requires],
            availability: {
              enabled,
              ...(modes ? { modes: [...modes] } : {}),
              ...(minRole ? { minRole } : {}),
            },
          }),
        );
      }
    }
  }
}

type CapabilityState = "available" | "unavailable" | "no status";
const CAPABILITY_STATES: CapabilityState[] = ["available", "unavailable", "no status"];
const RANK: Record<string, number> = { viewer: 1, member: 2, admin: 3 };

/** What each tool's reasons must be, worked out from the fixture's own tables. */
function expectedReasons(
  spec: ToolSpec,
  mode: string,
  role: string,
  capabilities: Record<string, CapabilityState>,
): string[] {
  const reasons: string[] = [];
  const { enabled, modes, minRole } = spec.availability;
  if (!enabled) reasons.push("disabled");
  if (modes && !modes.includes(mode)) reasons.push("mode");
  const have = RANK[role] ?? 0;
  const need = minRole === undefined ? 0 : (RANK[minRole] ?? Number.POSITIVE_INFINITY);
  if (have < need) reasons.push("role");
  for (const name of spec.requires) {
    if (capabilities[name] !== "available") reasons.push(`capability:${name}`);
  }
  return reasons;
}

const sortKey = (spec: ToolSpec) => `${CATEGORIES.indexOf(spec.category)}:${spec.id}`;

describe("selection over every mode x role x capability x enabled combination", () => {
  const cases = [null, "draft", "review"].flatMap((mode) =>
    ["viewer", "member", "admin"].flatMap((role) =>
      CAPABILITY_STATES.flatMap((github) =>
        CAPABILITY_STATES.map((network) => ({ mode, role, github, network })),
      ),
    ),
  );

  it.each(cases)(
    "mode $mode, role $role, github_token $github, network $network",
    ({ mode, role, github, network }) => {
      const capabilities = [
        ...(github === "no status" ? [] : [status("github_token", github === "available")]),
        ...(network === "no status" ? [] : [status("network", network === "available")]),
      ];
      const selection = select({ config, tools: catalog, role, mode, capabilities });
      const effectiveMode = mode ?? "draft";
      expect(selection.mode).toBe(effectiveMode);

      const states = { github_token: github, network };
      const ordered = [...catalog].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
      const expectedAvailable = ordered
        .filter((spec) => expectedReasons(spec, effectiveMode, role, states).length === 0)
        .map((spec) => spec.id);
      const expectedExcluded = ordered
        .map((spec) => ({
          tool: spec.id,
          reasons: expectedReasons(spec, effectiveMode, role, states),
        }))
        .filter((entry) => entry.reasons.length > 0);

      expect(selection.available.map((spec) => spec.id)).toEqual(expectedAvailable);
      expect(selection.excluded).toEqual(expectedExcluded);
    },
  );

  it("covers every combination of the fixture (sanity check of the table itself)", () => {
    expect(catalog).toHaveLength(
      MODE_SETTINGS.length * MIN_ROLES.length * REQUIRES.length * ENABLED.length,
    );
    expect(cases).toHaveLength(3 * 3 * 9);
  });
});

describe("selection", () => {
  const research = tool("web_search", { category: "research", requires: ["network"] });
  const reference = tool("github_api", { category: "reference", requires: ["github_token"] });
  const utility = tool("static_links", { category: "utility" });
  const enhance = tool("readability_analyzer", { category: "enhance" });
  const tools = [utility, reference, enhance, research];
  const everything = [status("network", true), status("github_token", true)];

  it("judges an array changed in place afresh, though it sorts a listed one only once", () => {
    const listed = [utility, enhance];
    const ids = () =>
      select({ config, tools: listed, role: "admin", capabilities: everything }).available.map(
        (t) => t.id,
      );
    expect(ids()).toEqual(["readability_analyzer", "static_links"]);
    listed[1] = tool("readability_analyzer", {
      category: "enhance",
      availability: { enabled: false },
    });
    expect(ids()).toEqual(["static_links"]);
    listed.push(research);
    expect(ids()).toEqual(["web_search", "static_links"]);
  });

  it("uses the stage's default mode when the mode is absent or null", () => {
    expect(select({ config, tools, role: "viewer", capabilities: [] }).mode).toBe("draft");
    expect(select({ config, tools, role: "viewer", mode: null, capabilities: [] }).mode).toBe(
      "draft",
    );
  });

  it("rejects an unknown mode with a 400 naming the modes", () => {
    const attempt = () =>
      select({ config, tools, role: "viewer", mode: "party", capabilities: [] });
    expect(attempt).toThrow(ValidationError);
    try {
      attempt();
    } catch (error) {
      expect((error as ValidationError).status).toBe(400);
      expect((error as ValidationError).details).toEqual([
        { path: "mode", message: "One of: draft, review." },
      ]);
    }
  });

  it("orders tools by category in the fixed order, then by id", () => {
    const selection = select({ config, tools, role: "viewer", capabilities: everything });
    expect(selection.available.map((t) => t.id)).toEqual([
      "web_search",
      "github_api",
      "readability_analyzer",
      "static_links",
    ]);
  });

  it("gives the same answer whatever order the tools and statuses come in", () => {
    const a = select({ config, tools, role: "member", capabilities: everything });
    const b = select({
      config,
      tools: [...tools].reverse(),
      role: "member",
      capabilities: [...everything].reverse(),
    });
    expect(b).toEqual(a);
  });

  it("keeps only the allowed tools and drops the denied ones, saying so", () => {
    const selection = select({
      config,
      tools,
      role: "viewer",
      capabilities: everything,
      allow: ["web_search", "static_links", "no_such_tool"],
      deny: ["static_links"],
    });
    expect(selection.available.map((t) => t.id)).toEqual(["web_search"]);
    expect(selection.excluded).toEqual([
      { tool: "github_api", reasons: ["not_allowed"] },
      { tool: "readability_analyzer", reasons: ["not_allowed"] },
      { tool: "static_links", reasons: ["denied"] },
    ]);
  });

  it("treats an empty allow list as allowing nothing, and no allow list as allowing all", () => {
    const none = select({ config, tools, role: "viewer", capabilities: everything, allow: [] });
    expect(none.available).toEqual([]);
    const all = select({ config, tools, role: "viewer", capabilities: everything });
    expect(all.available).toHaveLength(tools.length);
  });

  it("lists every reason that applies, in the fixed order", () => {
    const blocked = tool("blocked", {
      requires: ["zeta", "alpha", "zeta"],
      availability: { enabled: false, modes: ["review"], minRole: "admin" },
    });
    const selection = select({
      config,
      tools: [blocked],
      role: "member",
      capabilities: [status("alpha", false)],
      allow: ["other"],
      deny: ["blocked"],
    });
    expect(selection.excluded).toEqual([
      {
        tool: "blocked",
        reasons: [
          "disabled",
          "mode",
          "role",
          "capability:zeta",
          "capability:alpha",
          "denied",
          "not_allowed",
        ],
      },
    ]);
  });

  it("counts a capability with a conflicting status as missing", () => {
    const selection = select({
      config,
      tools: [research],
      role: "viewer",
      capabilities: [status("network", true), status("network", false)],
    });
    expect(selection.excluded).toEqual([{ tool: "web_search", reasons: ["capability:network"] }]);
  });

  it("excludes tools with a minimum role from a role the stage does not know", () => {
    const guarded = tool("guarded", { availability: { enabled: true, minRole: "viewer" } });
    const open = tool("open_tool");
    const selection = select({ config, tools: [guarded, open], role: "ghost", capabilities: [] });
    expect(selection.available.map((t) => t.id)).toEqual(["open_tool"]);
    expect(selection.excluded).toEqual([{ tool: "guarded", reasons: ["role"] }]);
  });

  it("leaves its input untouched", () => {
    const input = [...tools];
    select({ config, tools: input, role: "viewer", capabilities: [] });
    expect(input).toEqual([utility, reference, enhance, research]);
  });
});

describe("a tool whose fallback can serve in its place", () => {
  const search = tool("web_search", {
    category: "research",
    requires: ["network"],
    fallback: "static_links",
  });
  const links = tool("static_links", { category: "reference" });
  const offline = [status("network", false)];

  it("is offered when it lacks only capabilities and its fallback is available", () => {
    const selection = select({
      config,
      tools: [search, links],
      role: "viewer",
      capabilities: offline,
    });
    expect(selection.available.map((t) => t.id)).toEqual(["web_search", "static_links"]);
    expect(selection.excluded).toEqual([]);
    expect(selection.servedByFallback).toEqual([
      { tool: "web_search", fallback: "static_links", reasons: ["capability:network"] },
    ]);
  });

  it("is left out when a status named after the fallback says it has nothing to serve", () => {
    const selection = select({
      config,
      tools: [search, links],
      role: "viewer",
      capabilities: [...offline, status("static_links", false)],
    });
    // static_links itself is still offered: it can say that no links are configured.
    expect(selection.available.map((t) => t.id)).toEqual(["static_links"]);
    expect(selection.excluded).toEqual([
      {
        tool: "web_search",
        reasons: ["capability:network"],
        fallbackReasons: ["capability:static_links"],
      },
    ]);
    expect(selection.servedByFallback).toEqual([]);
  });

  it("is left out when the fallback would be left out itself, saying why", () => {
    const disabled = tool("static_links", {
      category: "reference",
      requires: ["links_host"],
      availability: { enabled: false },
    });
    const selection = select({
      config,
      tools: [search, disabled],
      role: "viewer",
      capabilities: offline,
    });
    expect(selection.excluded).toEqual([
      {
        tool: "web_search",
        reasons: ["capability:network"],
        fallbackReasons: ["disabled", "capability:links_host"],
      },
      { tool: "static_links", reasons: ["disabled", "capability:links_host"] },
    ]);
  });

  it("is left out for any reason but capabilities, with no word on its fallback", () => {
    const hidden = tool("web_search", {
      category: "research",
      requires: ["network"],
      fallback: "static_links",
      availability: { minRole: "admin" },
    });
    const selection = select({
      config,
      tools: [hidden, links],
      role: "viewer",
      capabilities: offline,
      deny: ["static_links"],
    });
    expect(selection.excluded).toEqual([
      { tool: "web_search", reasons: ["role", "capability:network"] },
      { tool: "static_links", reasons: ["denied"] },
    ]);
    // Denying the fallback narrows what the caller sees, not what answers for a tool.
    const denied = select({
      config,
      tools: [search, links],
      role: "viewer",
      capabilities: offline,
      deny: ["static_links"],
    });
    expect(denied.available.map((t) => t.id)).toEqual(["web_search"]);
  });

  it("finds its fallback among `fallbacks` when a filtered read left it out", () => {
    const alone = select({ config, tools: [search], role: "viewer", capabilities: offline });
    expect(alone.excluded).toEqual([{ tool: "web_search", reasons: ["capability:network"] }]);
    const judged = select({
      config,
      tools: [search],
      fallbacks: [search, links],
      role: "viewer",
      capabilities: offline,
    });
    expect(judged.available.map((t) => t.id)).toEqual(["web_search"]);
    expect(judged.servedByFallback).toHaveLength(1);
  });
});
