/**
 * What the admin pages share: showing the API's error with its details, an inline
 * confirmation in place of a dangerous button, a button that waits for its request, and the
 * 403 a page raises when its role may not administer.
 */
import { ApiError } from "../api";
import { append, h, notice, replace, table } from "../dom";
import type { Permission, ViewContext } from "../view";

let counter = 0;

/** A fresh id for label/aria links on this page. */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** One entry of a 400's `details`: where in the request, and what is wrong there. */
interface Detail {
  path: string;
  message: string;
}

function detailsOf(details: unknown): Detail[] | undefined {
  if (!Array.isArray(details)) return undefined;
  const found: Detail[] = [];
  for (const entry of details) {
    if (entry && typeof entry === "object" && "message" in entry) {
      const { path, message } = entry as { path?: unknown; message?: unknown };
      found.push({
        path: typeof path === "string" && path !== "" ? path : "(body)",
        message: String(message),
      });
    }
  }
  return found;
}

/**
 * The API's answer to a failed action, as the API said it: the message, then each detail with
 * its path. A 401 has already sent the person to sign-in; anything not from the API shows its
 * own message.
 */
export function errorNotice(error: unknown, id?: string): HTMLElement {
  if (!(error instanceof ApiError)) {
    const message = error instanceof Error ? error.message : String(error);
    return withId(notice("error", message), id);
  }
  const listed = detailsOf(error.body.details);
  const box = notice(
    "error",
    h(
      "p",
      { class: "error-message" },
      error.body.message,
      " ",
      h("span", { class: "code" }, `(${error.status} ${error.body.code})`),
    ),
  );
  if (listed && listed.length > 0) {
    append(box, [
      h(
        "ul",
        { class: "error-details" },
        ...listed.map((detail) =>
          h("li", {}, h("code", { class: "error-path" }, detail.path), " ", detail.message),
        ),
      ),
    ]);
  } else if (error.body.details !== undefined && !listed) {
    append(box, [h("pre", { class: "error-raw" }, JSON.stringify(error.body.details, null, 2))]);
  }
  return withId(box, id);
}

function withId(element: HTMLElement, id: string | undefined): HTMLElement {
  if (id) element.id = id;
  return element;
}

/**
 * Runs `action` with `button` disabled (and marked busy) until it settles, so a second press
 * cannot send the request twice.
 */
export async function busy<T>(button: HTMLButtonElement, action: () => Promise<T>): Promise<T> {
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  try {
    return await action();
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
  }
}

/**
 * A button that asks before it acts: pressing it puts "question [confirm] [keep]" in its place
 * (no window.confirm), with focus on the safe choice. Keep puts the button back; confirm runs
 * `act`, which says what to show after.
 */
export function confirmButton(options: {
  label: string;
  /** The accessible name of the first button, e.g. "Revoke key ci-bot". */
  name?: string;
  question: string;
  confirm: string;
  keep?: string;
  act: () => Promise<void>;
}): HTMLElement {
  const host = h("span", { class: "confirm-host" });
  const start = (): void => {
    const trigger = h(
      "button",
      {
        type: "button",
        class: "quiet danger-text",
        ...(options.name ? { "aria-label": options.name } : {}),
        onclick: () => ask(),
      },
      options.label,
    );
    replace(host, trigger);
  };
  const ask = (): void => {
    const questionId = uid("confirm");
    const problem = h("span", { class: "confirm-problem" });
    const yes = h("button", { type: "button", class: "danger" }, options.confirm);
    const no = h(
      "button",
      { type: "button", class: "quiet", onclick: () => back() },
      options.keep ?? "Keep",
    );
    yes.addEventListener("click", () => {
      void busy(yes, async () => {
        try {
          await options.act();
        } catch (error) {
          replace(problem, errorNotice(error));
        }
      });
    });
    const group = h(
      "span",
      { class: "confirm", role: "group", "aria-labelledby": questionId },
      h("span", { id: questionId, class: "confirm-question" }, options.question),
      " ",
      yes,
      " ",
      no,
      problem,
    );
    group.addEventListener("keydown", (event) => {
      if ((event as KeyboardEvent).key === "Escape") back();
    });
    replace(host, group);
    no.focus();
  };
  const back = (): void => {
    start();
    (host.querySelector("button") as HTMLButtonElement | null)?.focus();
  };
  start();
  return host;
}

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
 * sideways inside its frame (the page itself never does). A frame that scrolls is a labelled
 * region that takes focus, so the keyboard can scroll it too; one that fits takes no tab stop.
 */
export function adminTable(
  caption: string,
  head: string[],
  rows: Parameters<typeof table>[2],
): HTMLElement {
  const wrap = table(caption, head, rows);
  wrap.classList.add("admin-table");
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", caption);
  const update = () => {
    if (wrap.scrollWidth > wrap.clientWidth + 1) wrap.tabIndex = 0;
    else wrap.removeAttribute("tabindex");
  };
  if (typeof ResizeObserver === "function") new ResizeObserver(update).observe(wrap);
  return wrap;
}
