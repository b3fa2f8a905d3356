import { h, heading, table } from "../dom";
import { href, segment, type View } from "../view";

interface ToolItem {
  id: string;
  title?: string;
  toolset: string;
  category: string;
  description: string;
  available: boolean;
  reasons?: string[];
}

/** Every tool the role may see, with whether it is available and, if not, why. */
export const catalogView: View = async ({ api, signal }) => {
  const { tools } = await api.get<{ tools: ToolItem[] }>("/v1/tools", { signal });
  const rows = tools.map((tool) => [
    h("a", { href: href(`/tools/${segment(tool.id)}`) }, tool.title ?? tool.id),
    tool.toolset,
    tool.category,
    tool.available
      ? h("span", { class: "badge ok" }, "available")
      : h("span", { class: "badge off" }, "unavailable"),
    (tool.reasons ?? []).join(", "),
  ]);
  return h(
    "section",
    {},
    heading("Catalog", `${tools.length} tools this role may see.`),
    table("Tools", ["Tool", "Toolset", "Category", "Status", "Why"], rows),
  );
};
