/**
 * What every page does the same way, decided once: showing a failure as the API said it, a
 * button that waits for its request, a confirmation in place of a dangerous button, moving the
 * focus to news, durations a person reads, and waiting between tries. (Times: `time` in
 * dom.ts.)
 */
import { ApiError } from "./api";
import { append, h, notice, replace } from "./dom";

let counter = 0;

/** A fresh id for label/aria links on this page. */
export function uid(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}`;
}

/** What went wrong, in one line: the API's own message, or whatever was thrown. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
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
 * A failure as a notice (role alert): the API's message with its status and code, then each
 * detail with its path; anything not from the API (a network failure, something thrown that is
 * not an Error) shows what it says. `what` leads it, e.g. "Could not approve".
 */
export function errorNotice(error: unknown, options: { what?: string; id?: string } = {}) {
  const lead = options.what ? `${options.what}: ` : "";
  let box: HTMLElement;
  if (!(error instanceof ApiError)) {
    box = notice("error", lead, errorText(error));
  } else {
    const listed = detailsOf(error.body.details);
    box = notice(
      "error",
      h(
        "p",
        { class: "error-message" },
        lead,
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
  }
  if (options.id) box.id = options.id;
  return box;
}

/**
 * Runs `action` once at a time for these buttons: until it settles they say they are busy
 * (aria-disabled, aria-busy) rather than being disabled, which would throw the keyboard focus
 * off them; a press meanwhile does nothing (resolves undefined).
 */
export async function busy<T>(
  buttons: HTMLButtonElement | HTMLButtonElement[],
  action: () => Promise<T>,
): Promise<T | undefined> {
  const all = Array.isArray(buttons) ? buttons : [buttons];
  if (all.some(isBusy)) return undefined;
  for (const button of all) {
    button.setAttribute("aria-disabled", "true");
    button.setAttribute("aria-busy", "true");
  }
  try {
    return await action();
  } finally {
    for (const button of all) {
      button.removeAttribute("aria-disabled");
      button.removeAttribute("aria-busy");
    }
  }
}

/** Whether a busy() button is waiting: a form's submit handler checks it before it acts. */
export function isBusy(button: HTMLButtonElement): boolean {
  return button.getAttribute("aria-disabled") === "true";
}

/**
 * A form whose submit runs `action` once at a time with `submit` busy (see busy): a submit
 * meanwhile does nothing; `problem` is cleared first and shows what `action` throws. A check
 * of the form's own that fails puts its notice in `problem` and returns.
 */
export function onSubmit(
  form: HTMLFormElement,
  submit: HTMLButtonElement,
  problem: HTMLElement,
  action: () => Promise<void>,
): void {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (isBusy(submit)) return;
    replace(problem);
    void busy(submit, async () => {
      try {
        await action();
      } catch (error) {
        replace(problem, errorNotice(error));
      }
    });
  });
}

/**
 * A button that asks before it acts: pressing it puts "question [confirm] [keep]" in its place
 * (no window.confirm), with focus on the safe choice; Keep or Escape puts the button back;
 * confirm runs `act`, which says what to show after.
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
 * Moves the focus to the notice just put in `holder` (its first element), e.g. after the
 * button that had the focus was replaced: a screen reader reads the news from there.
 */
export function focusNotice(holder: HTMLElement): void {
  const target = holder.firstElementChild as HTMLElement | null;
  if (!target) return;
  target.tabIndex = -1;
  target.focus();
}

/**
 * A block that may scroll (a wide table, a long input or output) can be reached and scrolled
 * with the keyboard: it is a named region, and takes the focus only while its content
 * overflows it, so one that fits costs no tab stop.
 */
export function scrollable<T extends HTMLElement>(element: T, label: string): T {
  element.setAttribute("role", "region");
  element.setAttribute("aria-label", label);
  const check = () => {
    const overflows =
      element.scrollHeight > element.clientHeight + 1 ||
      element.scrollWidth > element.clientWidth + 1;
    if (overflows) element.tabIndex = 0;
    else element.removeAttribute("tabindex");
  };
  if (typeof ResizeObserver === "function") new ResizeObserver(check).observe(element);
  return element;
}

/** A duration a person reads: 850 ms, 4.2 s, 30 s, 3 min 5 s, 5 min, 2 h 4 min. */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) {
    const seconds = ms / 1000;
    return `${Number.isInteger(seconds) || ms >= 10_000 ? Math.round(seconds) : seconds.toFixed(1)} s`;
  }
  const seconds = Math.round(ms / 1000);
  const [big, small] =
    seconds < 3600
      ? [`${Math.floor(seconds / 60)} min`, `${seconds % 60} s`]
      : [`${Math.floor(seconds / 3600)} h`, `${Math.floor((seconds % 3600) / 60)} min`];
  return small.startsWith("0 ") ? big : `${big} ${small}`;
}

/** Waits `ms`, or less when `signal` aborts first (it resolves then too: check `aborted`). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
