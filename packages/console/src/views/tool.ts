import type { toolListView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { facts, h, heading, json, notice } from "../dom";
import { href, type View } from "../view";
import { duration } from "../widgets";
import {
  availabilityOf,
  loadCapabilities,
  type Tool,
  takeFlash,
  toggleButton,
} from "./catalog-common";
import { tryItSection } from "./tool-try";

/**
 * A tool's page: what it is and does, whether the role may use it now and why not, its
 * schemas, guidelines, examples and annotations, and, for a role that may call, a Try-it form
 * generated from its input schema that makes a real call and shows the result.
 */
export const toolView: View = async (context) => {
  const { api, signal, params } = context;
  const id = params.id ?? "";
  const [listed, capabilities] = await Promise.all([
    api.get<z.infer<typeof toolListView>>("/v1/tools", { signal }),
    loadCapabilities(api, signal),
  ]);
  // The list has every tool with its availability; a tool it leaves out is read by its id
  // (which answers 404 for one that does not exist).
  const item = listed.tools.find((candidate) => candidate.id === id);
  const tool: Tool =
    item ?? (await api.get<Tool>(`/v1/tools/${encodeURIComponent(id)}`, { signal }));
  const mayCall = context.can("call");
  const tryIt = mayCall ? tryItSection(context, tool, item?.available ?? false) : undefined;

  return h(
    "article",
    { class: "tool-page" },
    h(
      "p",
      { class: "crumbs" },
      h("a", { href: href("/catalog") }, "Catalog"),
      " / ",
      h("a", { href: href("/catalog", { toolset: tool.toolset }) }, tool.toolset),
    ),
    heading(tool.title, tool.description),
    takeFlash(),
    facts([
      ["Id", h("code", {}, tool.id)],
      ["Toolset", h("a", { href: href("/catalog", { toolset: tool.toolset }) }, tool.toolset)],
      ["Category", tool.category],
      [
        "Availability",
        item
          ? availabilityOf(item, capabilities, context.me.role)
          : h("span", { class: "badge off" }, "not listed for your role"),
      ],
      ["When to use it", tool.usageHint ?? ""],
      ["Annotations", annotations(tool)],
      ["Needs", (tool.requires ?? []).join(", ")],
      ["Produces", (tool.produces ?? []).join(", ")],
      ["Fallback", tool.fallback ?? ""],
      ["Timeout", tool.timeoutMs ? duration(tool.timeoutMs) : ""],
      ["Cost", tool.cost !== undefined ? String(tool.cost) : ""],
      ["Version", tool.version ?? ""],
      ["Runs as", tool.implementation?.kind ?? ""],
    ]),
    toggleButton(context, tool),
    tryIt?.section ??
      notice(
        "info",
        `Your role (${context.me.role}) may look at this tool but not call it, so there is no Try-it form.`,
      ),
    guidelines(tool),
    examples(tool, tryIt?.form.fill, tryIt?.section),
    schemas(tool),
    setup(tool),
  );
};

function yesNo(value: boolean | undefined): string {
  return value ? "yes" : "no";
}

function annotations(tool: Tool): HTMLElement | string {
  const a = tool.annotations;
  if (!a) return "";
  return h(
    "ul",
    { class: "annotations" },
    h("li", {}, `Read-only: ${yesNo(a.readOnly)}`),
    h("li", {}, `Reaches the open world: ${yesNo(a.openWorld)}`),
    h("li", {}, `Idempotent: ${yesNo(a.idempotent)}`),
  );
}

function guidelines(tool: Tool): HTMLElement | undefined {
  const todo = tool.guidelines?.do ?? [];
  const dont = tool.guidelines?.dont ?? [];
  if (todo.length === 0 && dont.length === 0) return undefined;
  return h(
    "section",
    { class: "guidelines", "aria-labelledby": "guidelines-title" },
    h("h2", { id: "guidelines-title" }, "Guidelines"),
    h(
      "div",
      { class: "guideline-columns" },
      todo.length > 0 &&
        h(
          "div",
          { class: "guideline do" },
          h("h3", {}, "Do"),
          h("ul", {}, ...todo.map((line) => h("li", {}, line))),
        ),
      dont.length > 0 &&
        h(
          "div",
          { class: "guideline dont" },
          h("h3", {}, "Don't"),
          h("ul", {}, ...dont.map((line) => h("li", {}, line))),
        ),
    ),
  );
}

function examples(
  tool: Tool,
  fill: ((input: unknown) => void) | undefined,
  form: HTMLElement | undefined,
): HTMLElement | undefined {
  const list = tool.examples ?? [];
  if (list.length === 0) return undefined;
  return h(
    "section",
    { class: "examples", "aria-labelledby": "examples-title" },
    h("h2", { id: "examples-title" }, "Examples"),
    ...list.map((example) =>
      h(
        "div",
        { class: "example" },
        h("h3", {}, example.title),
        json(example.input),
        fill &&
          h(
            "button",
            {
              type: "button",
              class: "quiet",
              onclick: () => {
                fill(example.input);
                form?.querySelector<HTMLElement>("input, select, textarea")?.focus();
              },
            },
            "Put this example in the form",
            h("span", { class: "visually-hidden" }, ` — ${example.title}`),
          ),
      ),
    ),
  );
}

function schemas(tool: Tool): HTMLElement {
  const shown = (title: string, schema: Record<string, unknown> | undefined) =>
    h(
      "details",
      { class: "schema" },
      h("summary", {}, title),
      schema
        ? json(schema)
        : h("p", { class: "hint" }, "None declared: the tool answers in text and content blocks."),
    );
  return h(
    "section",
    { class: "schemas", "aria-labelledby": "schemas-title" },
    h("h2", { id: "schemas-title" }, "Schemas"),
    shown("Input schema", tool.inputSchema),
    shown("Output schema", tool.outputSchema),
  );
}

function setup(tool: Tool): HTMLElement | undefined {
  const fields = tool.setup ?? [];
  if (fields.length === 0) return undefined;
  return h(
    "section",
    { class: "setup-list", "aria-labelledby": "setup-title" },
    h("h2", { id: "setup-title" }, "Setting it up"),
    h(
      "ul",
      {},
      ...fields.map((field) =>
        h(
          "li",
          {},
          h("code", {}, field.env ?? field.secret ?? field.name),
          field.required ? " (required)" : " (optional)",
          ": ",
          field.description,
        ),
      ),
    ),
  );
}
