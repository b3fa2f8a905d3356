import type { auditPageView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { append, h, heading, notice, time } from "../dom";
import { href, type View } from "../view";
import { adminTable } from "./admin-kit";

type AuditPage = z.infer<typeof auditPageView>;
type AuditEntry = AuditPage["entries"][number];

const PAGE = 50;

/**
 * `/admin/audit`: who changed the catalog, keys and registered toolsets, newest first, a page
 * at a time with the API's cursor (`?cursor=` in the console's address, so a page can be
 * linked and the browser's Back goes to the newer one). The API takes no filter.
 */
export const auditView: View = async (context) => {
  const cursor = context.query.get("cursor") ?? undefined;
  const page = await context.api.get<AuditPage>("/v1/audit", {
    signal: context.signal,
    query: { limit: PAGE, cursor },
  });
  const section = h(
    "section",
    { class: "admin" },
    heading(
      "Audit",
      "Every admin write: who, what, on which object, from and to which version. Newest first.",
    ),
  );
  if (page.entries.length === 0) {
    append(section, [notice("info", cursor ? "No older entries." : "Nothing was changed yet.")]);
  } else {
    append(section, [
      adminTable(
        cursor ? "Audit entries, older page" : "Audit entries, newest first",
        ["When", "Who", "Action", "Object", "Result", "Version"],
        page.entries.map((entry) => [
          time(entry.at),
          [
            h("span", { class: "mono" }, entry.actor.keyId),
            h("div", { class: "hint" }, entry.actor.role),
          ],
          h("code", { class: "audit-action" }, requestLine(entry)),
          objectCell(entry),
          h("span", { class: `badge ${entry.status < 400 ? "ok" : "off"}` }, String(entry.status)),
          entry.before || entry.after ? `${entry.before ?? "–"} → ${entry.after ?? "–"}` : "",
        ]),
      ),
    ]);
  }
  const pager = h("nav", { class: "pager", "aria-label": "Audit pages" });
  if (cursor) append(pager, [h("a", { href: href("/admin/audit") }, "Newest entries")]);
  if (page.cursor) {
    append(pager, [
      h("a", { href: href("/admin/audit", { cursor: page.cursor }) }, "Older entries"),
    ]);
  }
  if (pager.childElementCount > 0) append(section, [pager]);
  return section;
};

/** The request that wrote: `POST /v1/keys` (the API records the method and the path apart). */
function requestLine(entry: AuditEntry): string {
  return entry.action.includes(" ") ? entry.action : `${entry.action} ${entry.target}`;
}

function objectCell(entry: AuditEntry): (Node | string)[] {
  const object = entry.object;
  if (!object) return [h("span", { class: "mono" }, entry.target)];
  const parts: (Node | string)[] = [
    h("span", { class: "hint" }, object.kind, " "),
    h("span", { class: "mono" }, object.id),
  ];
  if (object.name) parts.push(" ", h("strong", {}, object.name));
  if (object.role) parts.push(" ", h("span", { class: "role" }, object.role));
  if (object.toolset) parts.push(h("div", { class: "hint" }, "toolset ", object.toolset));
  if (object.touched && object.touched.length > 0) {
    const count = object.touchedCount ?? object.touched.length;
    parts.push(
      h(
        "div",
        { class: "hint" },
        `touched ${count}: ${object.touched.join(", ")}${count > object.touched.length ? ", …" : ""}`,
      ),
    );
  }
  return parts;
}
