import type { toolListView, toolsetListView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { h, heading, notice } from "../dom";
import { href, type View, type ViewContext } from "../view";
import {
  availabilityOf,
  CATEGORIES,
  type Capability,
  cardTable,
  loadCapabilities,
  type ToolItem,
  type Toolset,
  takeFlash,
  toggleButton,
  toolHref,
} from "./catalog-common";
import { searchSection } from "./catalog-search";

/**
 * The catalog: every toolset and its tools the role may see, with whether each is available
 * and, if not, why in plain words (a missing capability with what sets it up); filters; a
 * search that says why each tool matched; and, for administrators, enable / disable. The
 * search term and the filters live in the hash's query, so a reload keeps them.
 */
export const catalogView: View = async (context) => {
  const { api, signal, query } = context;
  const q = query.get("q")?.trim() ?? "";
  const filters = {
    toolset: query.get("toolset") ?? "",
    category: query.get("category") ?? "",
    available: query.get("available") ?? "",
  };
  const filtered = Object.values(filters).some(Boolean);
  const [listed, all, { toolsets }, capabilities] = await Promise.all([
    api.get<z.infer<typeof toolListView>>("/v1/tools", {
      signal,
      query: {
        toolset: filters.toolset || undefined,
        category: filters.category || undefined,
        available:
          filters.available === "true" || filters.available === "false"
            ? filters.available
            : undefined,
      },
    }),
    // Every tool, when filters leave some out: the search's excluded tools are explained from
    // their specs.
    q && filtered
      ? api.get<z.infer<typeof toolListView>>("/v1/tools", { signal })
      : Promise.resolve(undefined),
    api.get<z.infer<typeof toolsetListView>>("/v1/toolsets", { signal }),
    loadCapabilities(api, signal),
  ]);
  const tools = listed.tools;
  const byId = new Map((all?.tools ?? tools).map((tool) => [tool.id, tool]));
  const available = tools.filter((tool) => tool.available).length;

  return h(
    "section",
    { class: "catalog" },
    heading(
      "Catalog",
      `${tools.length} ${tools.length === 1 ? "tool" : "tools"}${filtered ? " match the filters" : ""}; ${available} available to you (${context.me.role}).`,
    ),
    takeFlash(),
    searchForm(context, q, filters),
    q ? await searchSection(context, q, byId, capabilities) : undefined,
    filterForm(context, q, filters, toolsets),
    toolsetSections(context, tools, toolsets, capabilities),
    capabilitySection(capabilities),
  );
};

type Filters = { toolset: string; category: string; available: string };

function go(context: ViewContext, q: string, filters: Filters): void {
  const target = href("/catalog", { q, ...filters }).slice(1);
  if (location.hash === `#${target}`) context.refresh();
  else context.navigate(target);
}

function searchForm(context: ViewContext, q: string, filters: Filters): HTMLElement {
  const input = h("input", {
    id: "catalog-q",
    type: "search",
    name: "q",
    value: q,
    autocomplete: "off",
    "aria-describedby": "catalog-q-help",
    maxlength: 500,
  });
  return h(
    "form",
    {
      class: "catalog-search",
      role: "search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        go(context, input.value.trim(), filters);
      },
    },
    h("label", { for: "catalog-q" }, "Search tools"),
    h(
      "p",
      { id: "catalog-q-help", class: "hint" },
      "Say what you need in words, e.g. “check that links still work”: each result says why it matched.",
    ),
    h(
      "div",
      { class: "search-row" },
      input,
      h("button", { type: "submit" }, "Search"),
      q &&
        h(
          "button",
          {
            type: "button",
            class: "quiet",
            onclick: () => go(context, "", filters),
          },
          "Clear search",
        ),
    ),
  );
}

function select(
  id: string,
  label: string,
  value: string,
  options: [string, string][],
): [HTMLElement, HTMLSelectElement] {
  const element = h(
    "select",
    { id, name: id },
    ...options.map(([optionValue, text]) =>
      h("option", { value: optionValue, selected: optionValue === value }, text),
    ),
  );
  return [h("div", { class: "filter" }, h("label", { for: id }, label), element), element];
}

function filterForm(
  context: ViewContext,
  q: string,
  filters: Filters,
  toolsets: Toolset[],
): HTMLElement {
  const [toolsetField, toolset] = select("filter-toolset", "Toolset", filters.toolset, [
    ["", "All toolsets"],
    ...toolsets.map((set): [string, string] => [set.name, set.name]),
  ]);
  const [categoryField, category] = select("filter-category", "Category", filters.category, [
    ["", "All categories"],
    ...CATEGORIES.map((name): [string, string] => [name, name]),
  ]);
  const [availableField, availability] = select(
    "filter-available",
    "Availability",
    filters.available,
    [
      ["", "Available or not"],
      ["true", "Available"],
      ["false", "Unavailable"],
    ],
  );
  const filtered = Object.values(filters).some(Boolean);
  return h(
    "form",
    {
      class: "catalog-filters",
      "aria-label": "Filter the tools",
      onsubmit: (event: Event) => {
        event.preventDefault();
        go(context, q, {
          toolset: toolset.value,
          category: category.value,
          available: availability.value,
        });
      },
    },
    toolsetField,
    categoryField,
    availableField,
    h(
      "div",
      { class: "filter-actions" },
      h("button", { type: "submit" }, "Filter"),
      filtered &&
        h(
          "button",
          {
            type: "button",
            class: "quiet",
            onclick: () => go(context, q, { toolset: "", category: "", available: "" }),
          },
          "Show all",
        ),
    ),
  );
}

function toolsetSections(
  context: ViewContext,
  tools: ToolItem[],
  toolsets: Toolset[],
  capabilities: Map<string, Capability>,
): HTMLElement {
  const wrap = h("div", { class: "toolsets" });
  if (tools.length === 0) {
    wrap.append(notice("info", "No tool matches these filters."));
    return wrap;
  }
  const admin = context.can("admin");
  const names = [...new Set([...toolsets.map((set) => set.name), ...tools.map((t) => t.toolset)])];
  for (const name of names) {
    const inSet = tools.filter((tool) => tool.toolset === name);
    if (inSet.length === 0) continue;
    const set = toolsets.find((candidate) => candidate.name === name);
    const head = ["Tool", "Category", "Availability"];
    if (admin) head.push("Change");
    const rows = inSet.map((tool) => {
      const row: (HTMLElement | string | HTMLElement[] | undefined)[] = [
        [h("a", { href: toolHref(tool.id) }, tool.title), h("div", { class: "tool-id" }, tool.id)],
        tool.category,
        availabilityOf(tool, capabilities, context.me.role),
      ];
      if (admin) row.push(toggleButton(context, tool));
      return row;
    });
    const id = `toolset-${name}`;
    wrap.append(
      h(
        "section",
        { class: "toolset", "aria-labelledby": id },
        h("h2", { id }, `Toolset ${name}`),
        set?.description && h("p", { class: "hint" }, set.description),
        cardTable(`Tools of the toolset ${name}`, head, rows, admin ? "tools-admin" : "tools"),
      ),
    );
  }
  return wrap;
}

function capabilitySection(capabilities: Map<string, Capability>): HTMLElement | undefined {
  if (capabilities.size === 0) return undefined;
  return h(
    "section",
    { class: "capabilities", "aria-labelledby": "capabilities-title" },
    h("h2", { id: "capabilities-title" }, "Capabilities"),
    h("p", { class: "hint" }, "What this stage has that tools need, and where it is read from."),
    cardTable(
      "Capabilities of this stage",
      ["Capability", "Status", "Why, and what sets it up"],
      [...capabilities.values()].map((capability) => [
        h("code", {}, capability.name),
        capability.available
          ? h("span", { class: "badge ok" }, "present")
          : h("span", { class: "badge off" }, "missing"),
        [
          capability.reason && h("div", {}, capability.reason),
          capability.source && h("div", { class: "hint" }, `Set by ${capability.source}`),
        ],
      ]),
      "capability-table",
    ),
  );
}
