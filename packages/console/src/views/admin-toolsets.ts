import type {
  heldChangeView,
  registrationOutcomeView,
  removedToolsetView,
  reviewDecisionView,
  toolsetReviewView as reviewSchema,
  toolsetListView,
  toolsetView,
  toolsetWithToolsView,
} from "@toolbus/wire/schemas";
import type { z } from "zod";
import { ApiError } from "../api";
import { append, facts, h, heading, notice, replace, time } from "../dom";
import { href, segment, type View, type ViewContext } from "../view";
import {
  busy,
  confirmButton,
  errorNotice,
  errorText,
  focusNotice,
  isBusy,
  onSubmit,
  uid,
} from "../widgets";
import { adminTable, field, plain, requirePermission } from "./admin-kit";

/** Where registered toolsets are written (routes/registered.ts's REGISTERED_TOOLSETS_PATH). */
const BASE = "/v1/registered-toolsets";

type ToolsetInfo = z.infer<typeof toolsetView>;
/** What a registration or a refresh stored. */
type Outcome = z.infer<typeof registrationOutcomeView>;
type FieldChange = HeldChange["fields"][number];
type HeldChange = z.infer<typeof heldChangeView>;
type Review = z.infer<typeof reviewSchema>;
type ToolInfo = Outcome["tools"][number];

/** A registered toolset as the list shows it: where it calls, and for MCP what waits. */
interface Row {
  toolset: ToolsetInfo;
  upstream: string[];
  review?: Review;
  problem?: unknown;
}

const path = (name: string, rest = "") => `${BASE}/${encodeURIComponent(name)}${rest}`;

/**
 * `/admin/toolsets`: the toolsets registered over the API (http endpoints and remote MCP
 * servers) with where they call and, for pinned MCP servers, what waits for review; refresh,
 * remove, and register from a pasted registration, which only the API validates.
 */
export const toolsetsView: View = async (context) => {
  // Listing toolsets is a read every role may make; administering them is not.
  requirePermission(context, "admin");
  const status = h("div", { class: "admin-status" });
  const list = h("div", { class: "admin-list" });

  const reload = async () => {
    replace(list, rowsTable(context, await loadRows(context), status, reload));
  };
  await reload();

  return h(
    "section",
    { class: "admin" },
    heading(
      "Registered toolsets",
      "HTTP endpoints and remote MCP servers added over the API. An MCP server's changed tools wait here for review before they are served.",
    ),
    status,
    list,
    registerForm(context, status, reload),
  );
};

async function loadRows(context: ViewContext): Promise<Row[]> {
  const { toolsets } = await context.api.get<z.infer<typeof toolsetListView>>("/v1/toolsets", {
    signal: context.signal,
  });
  const registered = toolsets
    .filter((toolset) => toolset.kind === "http" || toolset.kind === "mcp")
    .sort((a, b) => a.name.localeCompare(b.name));
  return Promise.all(
    registered.map(async (toolset): Promise<Row> => {
      try {
        if (toolset.kind === "mcp") {
          const review = await context.api.get<Review>(path(toolset.name, "/review"), {
            signal: context.signal,
          });
          return { toolset, upstream: toolset.source ? [toolset.source.url] : [], review };
        }
        const { tools } = await context.api.get<z.infer<typeof toolsetWithToolsView>>(
          `/v1/toolsets/${encodeURIComponent(toolset.name)}`,
          { signal: context.signal },
        );
        return { toolset, upstream: upstreamsOf(tools) };
      } catch (error) {
        if (error instanceof ApiError && error.status === 403) throw error;
        return { toolset, upstream: toolset.source ? [toolset.source.url] : [], problem: error };
      }
    }),
  );
}

/** The distinct origins an http toolset's tools call. */
function upstreamsOf(tools: ToolInfo[]): string[] {
  const origins = new Set<string>();
  for (const tool of tools) {
    const url = tool.implementation?.kind === "http" ? tool.implementation.url : undefined;
    if (!url) continue;
    try {
      origins.add(new URL(url.replace(/\{[^}]*\}/g, "x")).origin);
    } catch {
      origins.add(url);
    }
  }
  return [...origins];
}

function rowsTable(
  context: ViewContext,
  rows: Row[],
  status: HTMLElement,
  reload: () => Promise<void>,
): HTMLElement {
  if (rows.length === 0) {
    return notice("info", "No toolset is registered yet: register one with the form below.");
  }
  return adminTable(
    "Registered toolsets",
    ["Name", "Kind", "Upstream", "Status", "Actions"],
    rows.map((row) => [
      [
        h("strong", {}, row.toolset.name),
        h(
          "div",
          { class: "hint" },
          row.toolset.owner,
          " · revision ",
          String(row.toolset.revision),
        ),
      ],
      row.toolset.kind === "mcp" ? "MCP server" : "HTTP",
      row.upstream.length > 0
        ? row.upstream.map((url) => h("div", { class: "mono upstream" }, url))
        : "",
      statusCell(row),
      h(
        "div",
        { class: "row-actions" },
        row.toolset.kind === "mcp"
          ? refreshButton(context, row.toolset.name, status, reload)
          : null,
        confirmButton({
          label: "Remove",
          name: `Remove toolset ${row.toolset.name}`,
          question: `Remove toolset ${row.toolset.name} and its tools?`,
          confirm: "Remove",
          keep: "Keep",
          act: async () => {
            const { removed } = await context.api.delete<z.infer<typeof removedToolsetView>>(
              path(row.toolset.name),
            );
            replace(
              status,
              notice(
                "success",
                `Removed toolset ${row.toolset.name} and ${removed.length} ${plural(removed.length, "tool")}.`,
              ),
            );
            await reload();
            focusNotice(status);
          },
        }),
      ),
    ]),
  );
}

function statusCell(row: Row): (Node | string)[] {
  if (row.problem) return [errorNotice(row.problem)];
  if (row.toolset.kind !== "mcp") return ["Serves what was registered"];
  const review = row.review;
  const updates = review?.updates ?? row.toolset.source?.updates ?? "review";
  if (updates === "follow") {
    return [
      h("span", { class: "badge warn" }, "follows the server"),
      " changes are served at once",
    ];
  }
  const pending = review?.pending.length ?? 0;
  if (pending === 0) {
    return [h("span", { class: "badge ok" }, "pinned"), " nothing waits for review"];
  }
  return [
    h("span", { class: "badge warn" }, "pinned"),
    " ",
    h(
      "a",
      { href: href(`/admin/toolsets/${segment(row.toolset.name)}/review`) },
      `${pending} ${plural(pending, "change")} to review`,
    ),
  ];
}

function refreshButton(
  context: ViewContext,
  name: string,
  status: HTMLElement,
  reload: () => Promise<void>,
): HTMLButtonElement {
  const button = h(
    "button",
    { type: "button", class: "quiet", "aria-label": `Refresh toolset ${name}` },
    "Refresh",
  );
  button.addEventListener("click", () => {
    void busy(button, async () => {
      try {
        const outcome = await context.api.post<Outcome>(path(name, "/refresh"));
        replace(status, outcomeNotice("Refreshed", outcome));
        await reload();
      } catch (error) {
        replace(status, errorNotice(error));
      }
      focusNotice(status);
    });
  });
  return button;
}

/** What a registration or refresh did, and a way to the review when something is held. */
function outcomeNotice(verb: string, outcome: Outcome): HTMLElement {
  const { diff } = outcome;
  const held = outcome.held ?? { added: [], changed: [], removed: [] };
  const parts: string[] = [];
  if (diff.added.length) parts.push(`added ${diff.added.join(", ")}`);
  if (diff.changed.length) parts.push(`changed ${diff.changed.join(", ")}`);
  if (diff.removed.length) parts.push(`removed ${diff.removed.join(", ")}`);
  const served = `${outcome.tools.length} ${plural(outcome.tools.length, "tool")} served`;
  const box = notice(
    "success",
    `${verb} ${outcome.toolset.name}: ${served}${parts.length ? `; ${parts.join("; ")}` : "; no change to what is served"}.`,
  );
  const heldParts: string[] = [];
  if (held.changed.length) heldParts.push(`changed ${held.changed.join(", ")}`);
  if (held.added.length) heldParts.push(`added ${held.added.join(", ")}`);
  if (held.removed.length) heldParts.push(`removed ${held.removed.join(", ")}`);
  const count = held.added.length + held.changed.length + held.removed.length;
  if (count > 0) {
    append(box, [
      " ",
      `${count} ${plural(count, "change")} held for review (${heldParts.join("; ")}). `,
      h(
        "a",
        { href: href(`/admin/toolsets/${segment(outcome.toolset.name)}/review`) },
        "Review the changes",
      ),
    ]);
  }
  return box;
}

const EXAMPLE = `{
  "kind": "mcp",
  "name": "docs",
  "description": "The docs team's MCP server",
  "owner": "team-docs",
  "url": "https://mcp.example.com/mcp"
}`;

function registerForm(
  context: ViewContext,
  status: HTMLElement,
  reload: () => Promise<void>,
): HTMLElement {
  const name = h("input", {
    type: "text",
    name: "name",
    autocomplete: "off",
    spellcheck: "false",
  });
  const body = h("textarea", {
    name: "registration",
    rows: 12,
    class: "mono registration",
    spellcheck: "false",
    placeholder: EXAMPLE,
    "aria-describedby": "register-problem",
  });
  const problem = h("div", { id: "register-problem", class: "form-problem" });
  const submit = h("button", { type: "submit" }, "Register");
  const form = h(
    "form",
    { class: "card admin-form", "aria-labelledby": "register-title" },
    h("h2", { id: "register-title" }, "Register a toolset"),
    h(
      "p",
      { class: "hint" },
      "Paste the registration the API takes (PUT ",
      h("code", {}, `${BASE}/{name}`),
      "): an http toolset with its tools, or an mcp toolset naming its server. Registering a name again replaces it. The API checks it and says what is wrong.",
    ),
    field("Toolset name", name, "Leave empty to use the JSON's name."),
    field("Registration (JSON)", body),
    submit,
    problem,
  );
  onSubmit(form, submit, problem, async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.value);
    } catch (error) {
      body.setAttribute("aria-invalid", "true");
      replace(problem, notice("error", `That is not JSON: ${errorText(error)}`));
      return;
    }
    const fromBody =
      parsed && typeof parsed === "object" && "name" in parsed
        ? (parsed as { name: unknown }).name
        : undefined;
    const target = name.value.trim() || (typeof fromBody === "string" ? fromBody : "");
    if (!target) {
      replace(problem, notice("error", 'Give the toolset a name, here or as "name" in the JSON.'));
      name.focus();
      return;
    }
    try {
      const outcome = await context.api.put<Outcome>(path(target), parsed);
      body.removeAttribute("aria-invalid");
      replace(status, outcomeNotice("Registered", outcome));
      body.value = "";
      name.value = "";
      await reload();
      focusNotice(status);
    } catch (error) {
      body.setAttribute("aria-invalid", "true");
      throw error;
    }
  });
  return form;
}

/**
 * `/admin/toolsets/:name/review`: what a pinned MCP server changed since its definitions were
 * pinned, tool by tool and field by field, to accept (served from then on) or reject (kept
 * pinned, not held again unless the server changes it again).
 */
export const toolsetReviewView: View = async (context) => {
  const name = context.params.name ?? "";
  const first = await context.api.get<Review>(path(name, "/review"), { signal: context.signal });
  const status = h("div", { class: "admin-status" });
  const body = h("div", { class: "review-body" });

  // The revision the person is looking at: a decision on an older one is refused (409).
  let shown = first;
  const show = (review: Review) => {
    shown = review;
    replace(body, reviewContent(review, decide));
  };
  const decide = async (
    decision: "accept" | "reject",
    tools: string[] | undefined,
  ): Promise<void> => {
    const outcome = await context.api.post<z.infer<typeof reviewDecisionView>>(
      path(name, `/review/${decision}`),
      tools ? { tools } : undefined,
      { headers: { "if-match": `"${shown.revision}"` } },
    );
    const decided = outcome.decided;
    replace(
      status,
      notice(
        "success",
        decided.length === 0
          ? "Nothing was decided: no such change waits any more."
          : decision === "accept"
            ? `Accepted ${decided.length} ${plural(decided.length, "change")} (${decided.join(", ")}): served from now on.`
            : `Rejected ${decided.length} ${plural(decided.length, "change")} (${decided.join(", ")}): the pinned definitions stay served.`,
      ),
    );
    show(outcome.review);
    focusNotice(status);
  };
  show(first);

  return h(
    "section",
    { class: "admin" },
    heading(
      `Review ${name}`,
      "What the server declares now, against the definitions pinned and served. Nothing here is served until it is accepted.",
    ),
    h("p", {}, h("a", { href: href("/admin/toolsets") }, "Back to registered toolsets")),
    status,
    body,
  );
};

function reviewContent(
  review: Review,
  decide: (decision: "accept" | "reject", tools: string[] | undefined) => Promise<void>,
): HTMLElement {
  const content = h(
    "div",
    {},
    facts([
      ["Updates", review.updates === "review" ? "held for review (pinned)" : "followed at once"],
      ["Revision", String(review.revision)],
      ["Pending", String(review.pending.length)],
    ]),
  );
  if (review.pending.length === 0) {
    append(content, [notice("info", "No change waits for review.")]);
  } else {
    const problem = h("div", { class: "form-problem" });
    const decideButton = (
      label: string,
      decision: "accept" | "reject",
      tools: string[] | undefined,
      accessible?: string,
    ) => {
      const button = h(
        "button",
        {
          type: "button",
          class: decision === "accept" ? "" : "quiet",
          ...(accessible ? { "aria-label": accessible } : {}),
        },
        label,
      );
      button.addEventListener("click", () => {
        if (isBusy(button)) return;
        replace(problem);
        void busy(button, async () => {
          try {
            await decide(decision, tools);
          } catch (error) {
            replace(problem, errorNotice(error));
          }
        });
      });
      return button;
    };
    append(content, [
      h(
        "div",
        { class: "decide-all" },
        decideButton("Accept all", "accept", undefined),
        " ",
        decideButton("Reject all", "reject", undefined),
      ),
      problem,
      h("h2", {}, `Pending (${review.pending.length})`),
      ...review.pending.map((change) =>
        changeCard(change, [
          decideButton("Accept", "accept", [change.id], `Accept the change to ${change.id}`),
          " ",
          decideButton("Reject", "reject", [change.id], `Reject the change to ${change.id}`),
        ]),
      ),
    ]);
  }
  if (review.rejected.length > 0) {
    append(content, [
      h("h2", {}, `Rejected (${review.rejected.length})`),
      h("p", { class: "hint" }, "Kept pinned; held again only if the server changes them again."),
      ...review.rejected.map((change) => changeCard(change, [])),
    ]);
  }
  return content;
}

const CHANGE_WORDS: Record<HeldChange["change"], string> = {
  added: "Added",
  changed: "Changed",
  removed: "Removed",
};

/** One tool's change: what kind, when, and each field from the pin to the server's. */
function changeCard(change: HeldChange, actions: (Node | string)[]): HTMLElement {
  const title =
    change.remoteName === change.id
      ? `${CHANGE_WORDS[change.change]}: ${change.id}`
      : `${CHANGE_WORDS[change.change]}: ${change.id} (server: ${change.remoteName})`;
  const fields =
    change.fields.length === 0
      ? h("p", { class: "hint" }, "No field differs.")
      : h(
          "div",
          { class: "field-diffs" },
          ...change.fields.map((entry) => fieldDiff(change, entry)),
        );
  return h(
    "article",
    { class: `card change change-${change.change}` },
    h(
      "h3",
      {},
      h(
        "span",
        {
          class: `badge ${change.change === "removed" ? "off" : change.change === "added" ? "ok" : "warn"}`,
        },
        change.change,
      ),
      " ",
      title,
    ),
    h("p", { class: "hint" }, "Found ", time(change.detectedAt)),
    fields,
    change.truncated ? h("p", { class: "hint" }, "More fields differ than are listed.") : null,
    actions.length > 0 ? h("div", { class: "row-actions" }, ...actions) : null,
  );
}

/** `/inputSchema/properties/q` reads as `inputSchema › properties › q`. */
function fieldName(pointer: string): string {
  if (pointer === "" || pointer === "/") return "(whole definition)";
  return pointer
    .replace(/^\//, "")
    .split("/")
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(" › ");
}

/**
 * One field from the pin to the server's declaration, side by side (stacked on a narrow
 * screen), each side named in words: an added tool has only the server's side, a removed one
 * only the pin's.
 */
function fieldDiff(change: HeldChange, entry: FieldChange): HTMLElement {
  const id = uid("field-diff");
  const sides: ["before" | "after", string][] = [];
  if (change.change !== "added") sides.push(["before", "Pinned (served now)"]);
  if (change.change !== "removed") {
    sides.push([
      "after",
      change.change === "added" ? "Server declares (not served)" : "Server declares",
    ]);
  }
  return h(
    "div",
    { class: "field-diff", role: "group", "aria-labelledby": id },
    h("h4", { id, class: "field-diff-name" }, h("code", {}, fieldName(entry.path))),
    h(
      "div",
      { class: `diff-pair sides-${sides.length}` },
      ...sides.map(([side, label]) =>
        h(
          "div",
          { class: "diff-side" },
          h("p", { class: "diff-label" }, label),
          diffValue(entry, side),
        ),
      ),
    ),
  );
}

function diffValue(entry: FieldChange, side: "before" | "after"): HTMLElement {
  if (entry[side] === undefined) return h("p", { class: "hint diff-none" }, "(not set)");
  const text = plain(entry[side]);
  return h(side === "before" ? "del" : "ins", { class: `diff diff-${side}` }, h("pre", {}, text));
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}
