import type {
  capabilitiesView,
  toolListItemView,
  toolsetView,
  toolView,
} from "@toolbus/wire/schemas";
import type { z } from "zod";
import { type Api, ApiError } from "../api";
import { h, notice, table } from "../dom";
import { href, segment, type ViewContext } from "../view";
import { busy, errorText } from "../widgets";

/**
 * What the catalog page and the tool page share: the API's shapes they read, a tool's
 * availability in plain words (with what sets a missing capability up), the admin's enable /
 * disable button, and a note carried over the refresh that follows a change.
 */

export type Tool = z.infer<typeof toolView>;
/** A tool as `GET /v1/tools` lists it: whether the caller's selection offers it, and why not. */
export type ToolItem = z.infer<typeof toolListItemView>;
export type SetupField = NonNullable<Tool["setup"]>[number];
export type Capability = z.infer<typeof capabilitiesView>["capabilities"][number];
export type Toolset = z.infer<typeof toolsetView>;

export const CATEGORIES = ["research", "reference", "enhance", "publish", "utility"] as const;

/** A link to a tool's page. */
export function toolHref(id: string): string {
  return href(`/tools/${segment(id)}`);
}

/** The capabilities by name; a viewer may read them too, but a failure only costs the detail. */
export async function loadCapabilities(
  api: Api,
  signal: AbortSignal,
): Promise<Map<string, Capability>> {
  try {
    const { capabilities } = await api.get<z.infer<typeof capabilitiesView>>("/v1/capabilities", {
      signal,
    });
    return new Map(capabilities.map((capability) => [capability.name, capability]));
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return new Map();
    throw error;
  }
}

/** The setup entries that provide a capability, read from the places its status names. */
export function setupFor(capability: Capability | undefined, tool: Tool): SetupField[] {
  const setup = tool.setup ?? [];
  const sources = (capability?.source ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);
  const found = setup.filter((field) =>
    sources.some((source) => {
      const [kind, name = ""] = source.split(/:(.*)/s);
      if (kind === "secret" || kind === "env") return field.secret === name || field.env === name;
      return field.name === name || field.name === `${kind}.${name}`;
    }),
  );
  if (found.length > 0) return found;
  // The status names no source a setup entry matches: the tool's required secrets say what to set.
  return setup.filter((field) => field.required && (field.secret || field.env));
}

/** One sentence for a selection reason: `capability:github_token`, `disabled`, `mode`, `role`. */
export function reasonSentence(
  reason: string,
  tool: Tool,
  capabilities: Map<string, Capability>,
  role: string,
): string {
  if (reason === "disabled") return "Disabled on this stage by an administrator.";
  if (reason === "mode") {
    const modes = tool.availability?.modes;
    return modes?.length
      ? `Not offered in this mode; it is offered in: ${modes.join(", ")}.`
      : "Not offered in this mode.";
  }
  if (reason === "role") {
    const least = tool.availability?.minRole;
    return least
      ? `Not open to your role (${role}); it needs ${least} or above.`
      : `Not open to your role (${role}).`;
  }
  if (reason.startsWith("capability:")) {
    const name = reason.slice("capability:".length);
    const capability = capabilities.get(name);
    const why = capability?.reason ?? (capability ? "" : "This stage does not have it.");
    return `Needs ${name}${why ? `: ${why}` : "."}`;
  }
  if (reason === "deny") return "Denied by this stage's access rules.";
  if (reason === "allow") return "Not among the tools this stage's rules allow.";
  return reason;
}

/** A reason as a list item: its sentence and, for a missing capability, what sets it up. */
function reasonItem(
  reason: string,
  tool: Tool,
  capabilities: Map<string, Capability>,
  role: string,
): HTMLElement {
  const sentence = reasonSentence(reason, tool, capabilities, role);
  if (!reason.startsWith("capability:")) return h("li", {}, sentence);
  const capability = capabilities.get(reason.slice("capability:".length));
  const setup = setupFor(capability, tool);
  if (setup.length === 0) return h("li", {}, sentence);
  const names = setup.map(setupName);
  return h(
    "li",
    {},
    sentence,
    " ",
    h("span", { class: "setup-line" }, `To set it up: set ${names.join(" or ")}.`),
    h(
      "details",
      { class: "setup" },
      h("summary", {}, "How to set it up"),
      h(
        "ul",
        {},
        ...setup.map((field) =>
          h("li", {}, h("code", {}, setupName(field)), ": ", field.description),
        ),
      ),
    ),
  );
}

function setupName(field: SetupField): string {
  return field.env ?? field.secret ?? field.name;
}

/** Whether a tool is available, in words, with its reasons (or what it needs to work fully). */
export function availabilityOf(
  tool: ToolItem,
  capabilities: Map<string, Capability>,
  role: string,
): HTMLElement {
  const items: HTMLElement[] = [];
  if (!tool.available) {
    for (const reason of tool.reasons ?? []) {
      items.push(reasonItem(reason, tool, capabilities, role));
    }
    if (tool.fallbackReasons?.length && tool.fallback) {
      items.push(
        h(
          "li",
          {},
          `Its fallback ${tool.fallback} cannot answer either: `,
          tool.fallbackReasons
            .map((reason) => reasonSentence(reason, tool, capabilities, role))
            .join(" "),
        ),
      );
    }
  } else {
    if (tool.servedBy) {
      const lacks = (tool.reasons ?? []).map((reason) =>
        reasonSentence(reason, tool, capabilities, role),
      );
      items.push(
        h(
          "li",
          {},
          "Answered by its fallback ",
          h("a", { href: toolHref(tool.servedBy) }, tool.servedBy),
          lacks.length ? `. ${lacks.join(" ")}` : ".",
        ),
      );
    }
    if (tool.needsConnection) {
      items.push(
        h(
          "li",
          {},
          `Needs your ${tool.needsConnection.provider} connection: `,
          h("a", { href: href("/me") }, "connect it"),
          ".",
        ),
      );
    }
  }
  return h(
    "div",
    { class: "availability" },
    tool.available
      ? h("span", { class: "badge ok" }, "available")
      : h("span", { class: "badge off" }, "unavailable"),
    items.length > 0 && h("ul", { class: "reasons" }, ...items),
  );
}

/** A note to show once, after the refresh that follows a change. */
let flash: { text: string; kind: "success" | "error" } | undefined;

export function setFlash(kind: "success" | "error", text: string): void {
  flash = { kind, text };
}

export function takeFlash(): HTMLElement | undefined {
  const shown = flash;
  flash = undefined;
  return shown && notice(shown.kind, shown.text);
}

/** The admin's button that enables or disables a tool on this stage, then shows the page again. */
export function toggleButton(context: ViewContext, tool: Tool): HTMLElement | undefined {
  if (!context.can("admin")) return undefined;
  const enabled = tool.availability?.enabled !== false;
  const action = enabled ? "disable" : "enable";
  const button = h(
    "button",
    {
      type: "button",
      class: "quiet toggle",
      onclick: () =>
        busy(button, async () => {
          try {
            await context.api.post(`/v1/tools/${segment(tool.id)}/${action}`, undefined, {
              signal: context.signal,
            });
            setFlash(
              "success",
              `${tool.title} is ${enabled ? "disabled" : "enabled"} on this stage.`,
            );
          } catch (error) {
            if (context.signal.aborted) return;
            setFlash("error", `Could not ${action} ${tool.title}: ${errorText(error)}`);
          }
          context.refresh();
        }),
    },
    enabled ? "Disable" : "Enable",
    h("span", { class: "visually-hidden" }, ` ${tool.title}`),
  );
  return button;
}

type Cell = Parameters<typeof table>[2][number][number];

/**
 * A table whose rows become cards on a narrow screen: each cell carries its column's name,
 * shown before it there (catalog.css), so nothing scrolls sideways at 390 px.
 */
export function cardTable(
  caption: string,
  head: string[],
  rows: Cell[][],
  kind: string,
): HTMLElement {
  const wrap = table(caption, head, rows);
  wrap.classList.add("cards", kind);
  for (const row of wrap.querySelectorAll("tbody tr")) {
    row.querySelectorAll("td").forEach((cell, index) => {
      cell.setAttribute("data-label", head[index] ?? "");
    });
  }
  return wrap;
}
