/**
 * What the admin pages share: the 403 a page raises when its role may not administer, labelled
 * fields, values shown as text, and tables that scroll inside their frame. (Errors, busy
 * buttons and confirmations: ../widgets.ts.)
 */
import { ApiError } from "../api";
import { h, table } from "../dom";
import type { Permission, ViewContext } from "../view";
import { scrollable, uid } from "../widgets";

/**
 * An admin page whose reads the API lets every role make still belongs to administrators: it
 * answers as the API would to their writes, so the shell shows its "Not allowed" page.
 */
export function requirePermission(context: ViewContext, permission: Permission): void {
  if (context.can(permission)) return;
  throw new ApiError(403, {
    code: "forbidden",
    message: `This page is for roles with the ${permission} permission; yours (${context.me.role}) does not have it.`,
  });
}

/** A labelled field: the label's `for` names the control. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  const id = control.id || uid("field");
  control.id = id;
  let hintElement: HTMLElement | undefined;
  if (hint) {
    hintElement = h("p", { class: "hint", id: `${id}-hint` }, hint);
    const described = control.getAttribute("aria-describedby");
    control.setAttribute("aria-describedby", described ? `${described} ${id}-hint` : `${id}-hint`);
  }
  return h("div", { class: "field" }, h("label", { for: id }, label), control, hintElement);
}

/** A value shown as JSON text unless it is a string (shown as it is). */
export function plain(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2) ?? String(value);
}

/**
 * `table()` for the admin pages: on a narrow screen a table keeps readable columns and scrolls
 * sideways inside its frame (the page itself never does), a region the keyboard can scroll.
 */
export function adminTable(
  caption: string,
  head: string[],
  rows: Parameters<typeof table>[2],
): HTMLElement {
  const wrap = table(caption, head, rows);
  wrap.classList.add("admin-table");
  return scrollable(wrap, caption);
}
