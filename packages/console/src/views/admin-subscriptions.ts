import type {
  failuresPageView,
  redriveResultView,
  replayResultView,
  subscriptionListView,
  subscriptionView,
} from "@toolbus/wire/schemas";
import type { z } from "zod";
import { append, facts, h, heading, notice, replace, time } from "../dom";
import { href, type View, type ViewContext } from "../view";
import { busy, errorNotice, focusNotice, onSubmit } from "../widgets";
import { adminTable, field } from "./admin-kit";

type Subscription = z.infer<typeof subscriptionView>;
type Target = Subscription["target"];
type Delivery = z.infer<typeof failuresPageView>["failures"][number];

const PAGE = 25;

/**
 * `/admin/subscriptions`: the subscriptions the API lets the caller see (its own; an admin's:
 * all), and with `?id=` one subscription's dead letters, to send again (redrive) — all of them
 * or one — or to replay a run's logged events to it.
 */
export const subscriptionsView: View = async (context) => {
  const { subscriptions } = await context.api.get<z.infer<typeof subscriptionListView>>(
    "/v1/subscriptions",
    { signal: context.signal },
  );
  const chosenId = context.query.get("id") ?? undefined;
  const chosen = chosenId ? subscriptions.find((each) => each.id === chosenId) : undefined;
  const section = h(
    "section",
    { class: "admin" },
    heading(
      "Subscriptions",
      context.can("admin")
        ? "Every subscription of this stage, and the deliveries that failed."
        : "Your subscriptions, and the deliveries that failed.",
    ),
    subscriptions.length === 0
      ? notice(
          "info",
          "No subscription yet. Subscriptions are made with POST /v1/subscriptions (see /docs).",
        )
      : subscriptionsTable(context, subscriptions, chosenId),
  );
  if (chosenId && !chosen) {
    append(section, [notice("error", `No subscription ${chosenId} is visible to you.`)]);
  } else if (chosen) {
    append(section, [await failuresSection(context, chosen)]);
  }
  return section;
};

function targetText(target: Target): string {
  if (target.kind === "webhook") return target.url;
  if (target.kind === "eventbridge") return target.busArn;
  return target.queueUrl;
}

function subscriptionsTable(
  context: ViewContext,
  subscriptions: Subscription[],
  chosen: string | undefined,
): HTMLElement {
  const showOwner = context.can("admin");
  const head = ["Name", "Target", "Status", ...(showOwner ? ["Owner"] : []), "Created", "Actions"];
  return adminTable(
    "Subscriptions",
    head,
    subscriptions.map((each) => [
      [h("strong", {}, each.name), h("div", { class: "hint mono" }, each.id)],
      [
        h("span", { class: "hint" }, each.target.kind, " "),
        h("span", { class: "mono upstream" }, targetText(each.target)),
      ],
      statusOf(each),
      ...(showOwner ? [`${each.owner.id} (${each.owner.role})`] : []),
      time(each.createdAt),
      h(
        "div",
        { class: "row-actions" },
        h(
          "a",
          {
            href: href("/admin/subscriptions", { id: each.id }),
            ...(chosen === each.id ? { "aria-current": "true" } : {}),
          },
          "Failures",
          h("span", { class: "visually-hidden" }, ` of ${each.name}`),
        ),
        pauseButton(context, each),
      ),
    ]),
  );
}

/** Pauses an active subscription, or resumes a paused one with a clean failure streak. */
function pauseButton(context: ViewContext, subscription: Subscription): HTMLButtonElement {
  const action = subscription.status === "active" ? "pause" : "resume";
  const label = action === "pause" ? "Pause" : "Resume";
  const button = h(
    "button",
    { type: "button", class: "quiet", "aria-label": `${label} subscription ${subscription.name}` },
    label,
  );
  button.addEventListener("click", () => {
    void busy(button, async () => {
      try {
        await context.api.post(
          `/v1/subscriptions/${encodeURIComponent(subscription.id)}/${action}`,
        );
        context.refresh();
      } catch (error) {
        button.after(errorNotice(error));
      }
    });
  });
  return button;
}

function statusOf(subscription: Subscription): (Node | string)[] {
  const parts: (Node | string)[] = [];
  if (subscription.status === "active") parts.push(h("span", { class: "badge ok" }, "active"));
  else {
    parts.push(
      h(
        "span",
        { class: "badge off" },
        subscription.pausedBecause === "failing" ? "paused: failing" : "paused",
      ),
    );
  }
  if (subscription.failureStreak > 0) {
    parts.push(" ", `${subscription.failureStreak} failed in a row`);
  }
  return parts;
}

async function failuresSection(
  context: ViewContext,
  subscription: Subscription,
): Promise<HTMLElement> {
  const cursor = context.query.get("cursor") ?? undefined;
  const status = h("div", { class: "admin-status" });
  const letters = h("div", { class: "dead-letters" });
  const failuresPath = `/v1/subscriptions/${encodeURIComponent(subscription.id)}/failures`;

  /** Reads the page of dead letters again and shows it, keeping the status line above it. */
  const load = async () => {
    const page = await context.api.get<z.infer<typeof failuresPageView>>(failuresPath, {
      signal: context.signal,
      query: { limit: PAGE, cursor },
    });
    replace(letters, lettersContent(subscription, page, cursor, redrive));
  };
  const redrive = async (button: HTMLButtonElement, eventKeys?: string[]) => {
    await busy(button, async () => {
      try {
        const { redriven } = await context.api.post<z.infer<typeof redriveResultView>>(
          `/v1/subscriptions/${encodeURIComponent(subscription.id)}/redrive`,
          eventKeys ? { eventKeys } : undefined,
        );
        replace(
          status,
          notice(
            "success",
            `${redriven} ${redriven === 1 ? "delivery" : "deliveries"} sent again, with a fresh retry window.`,
            subscription.status === "paused"
              ? " The subscription is paused: resume it for them to be delivered."
              : "",
          ),
        );
        await load();
      } catch (error) {
        replace(status, errorNotice(error));
      }
      focusNotice(status);
    });
  };
  await load();

  return h(
    "section",
    { class: "subscription-failures", "aria-labelledby": "failures-title" },
    h("h2", { id: "failures-title" }, `Failures of ${subscription.name}`),
    facts([
      ["Target", `${subscription.target.kind}: ${targetText(subscription.target)}`],
      ["Pattern", h("code", {}, subscription.pattern)],
      ["Updated", time(subscription.updatedAt)],
    ]),
    status,
    letters,
    replayForm(context, subscription),
  );
}

function lettersContent(
  subscription: Subscription,
  page: { failures: Delivery[]; cursor: string | null },
  cursor: string | undefined,
  redrive: (button: HTMLButtonElement, eventKeys?: string[]) => Promise<void>,
): HTMLElement {
  const content = h("div", {});
  if (page.failures.length === 0) {
    append(content, [
      notice(
        "info",
        cursor
          ? "No more dead letters."
          : "No dead letters: every delivery landed or is still retrying.",
      ),
    ]);
  } else {
    const redriveAll = h("button", { type: "button" }, "Redrive all");
    redriveAll.addEventListener("click", () => void redrive(redriveAll));
    append(content, [
      h("div", { class: "decide-all" }, redriveAll),
      adminTable(
        `Dead letters of ${subscription.name}`,
        ["Event", "Type", "Attempts", "Last error", "Dead since", "Actions"],
        page.failures.map((delivery) => {
          const again = h(
            "button",
            { type: "button", class: "quiet", "aria-label": `Redrive ${delivery.eventKey}` },
            "Redrive",
          );
          again.addEventListener("click", () => void redrive(again, [delivery.eventKey]));
          return [
            h("span", { class: "mono" }, delivery.eventKey),
            [delivery.detailType, delivery.replayId ? h("div", { class: "hint" }, "replay") : null],
            String(delivery.attempts),
            delivery.lastError
              ? [
                  delivery.lastError.status ? `HTTP ${delivery.lastError.status}: ` : "",
                  delivery.lastError.message,
                ]
              : "",
            time(delivery.deadAt),
            again,
          ];
        }),
      ),
    ]);
  }
  const pager = h("nav", { class: "pager", "aria-label": "Dead letter pages" });
  if (cursor) {
    append(pager, [
      h("a", { href: href("/admin/subscriptions", { id: subscription.id }) }, "Newest failures"),
    ]);
  }
  if (page.cursor) {
    append(pager, [
      h(
        "a",
        { href: href("/admin/subscriptions", { id: subscription.id, cursor: page.cursor }) },
        "Older failures",
      ),
    ]);
  }
  if (pager.childElementCount > 0) append(content, [pager]);
  return content;
}

/** Replays one run's logged events that the pattern matches, marked as a replay. */
function replayForm(context: ViewContext, subscription: Subscription): HTMLElement {
  const runId = h("input", {
    type: "text",
    name: "runId",
    autocomplete: "off",
    spellcheck: "false",
  });
  const submit = h("button", { type: "submit" }, "Replay run");
  const result = h("div", { class: "form-problem" });
  const form = h(
    "form",
    { class: "card admin-form", "aria-labelledby": "replay-title" },
    h("h3", { id: "replay-title" }, "Replay a run"),
    field(
      "Run id",
      runId,
      "Its logged events that the pattern matches are sent again, marked as a replay.",
    ),
    submit,
    result,
  );
  onSubmit(form, submit, result, async () => {
    const replay = await context.api.post<z.infer<typeof replayResultView>>(
      `/v1/subscriptions/${encodeURIComponent(subscription.id)}/replay`,
      {
        runId: runId.value.trim(),
      },
    );
    replace(
      result,
      notice(
        "success",
        `Queued ${replay.queued} of ${replay.events} events read${replay.complete ? "" : " (stopped at the limit: replay the rest later)"}.`,
      ),
    );
  });
  return form;
}
