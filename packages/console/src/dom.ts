/**
 * Building the page from elements and text nodes only: nothing here parses HTML, so whatever a
 * tool, a key name or an upstream server says is shown as text, never run or rendered as markup.
 */

type Child = Node | string | number | false | null | undefined;
type Props = Record<string, string | number | boolean | EventListener | undefined | null>;

/** An element with attributes (`on*` functions become listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === "function") {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (name === "value" && "value" in element) {
      (element as HTMLInputElement).value = String(value);
    } else if (name === "checked" && element instanceof HTMLInputElement) {
      element.checked = value === true;
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/** Appends children, flattening arrays and skipping empty ones; strings become text nodes. */
export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `parent`. */
export function replace(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A page heading with an optional line under it. */
export function heading(title: string, lead?: string): HTMLElement {
  return h(
    "header",
    { class: "page-head" },
    h("h1", { tabindex: "-1" }, title),
    lead && h("p", { class: "lead" }, lead),
  );
}

/** A notice for a person: `role="status"` for news, `role="alert"` for a failure. */
export function notice(kind: "info" | "error" | "success", ...text: Child[]): HTMLElement {
  return h(
    "div",
    { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" },
    ...text,
  );
}

/** A definition list from label/value pairs; empty values are left out. */
export function facts(rows: [string, Child | Child[]][]): HTMLElement {
  const list = h("dl", { class: "facts" });
  for (const [label, value] of rows) {
    if (value === undefined || value === null || value === false || value === "") continue;
    append(list, [h("dt", {}, label), h("dd", {}, ...(Array.isArray(value) ? value : [value]))]);
  }
  return list;
}

/** A table with a header row; each row is a list of cells. */
export function table(caption: string, head: string[], rows: (Child | Child[])[][]): HTMLElement {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      {},
      h("caption", { class: "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, ...head.map((cell) => h("th", { scope: "col" }, cell)))),
      h(
        "tbody",
        {},
        ...rows.map((row) =>
          h("tr", {}, ...row.map((cell) => h("td", {}, ...(Array.isArray(cell) ? cell : [cell])))),
        ),
      ),
    ),
  );
}

/**
 * An instant in the reader's locale, with the exact instant as the tooltip: its date and time,
 * or (`clock`) only the time of day when it is today.
 */
export function time(
  iso: string | undefined,
  style: "full" | "clock" = "full",
): HTMLElement | string {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const today = style === "clock" && new Date().toDateString() === date.toDateString();
  return h(
    "time",
    { datetime: iso, title: iso },
    today ? date.toLocaleTimeString() : date.toLocaleString(),
  );
}

/** JSON shown as preformatted text. */
export function json(value: unknown): HTMLElement {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2) ?? "");
}
