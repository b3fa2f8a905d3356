import type { connectionProviderView, connectionView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { ApiError } from "../api";
import { facts, h, heading, notice, replace, time } from "../dom";
import { type Me, segment, type View, type ViewContext } from "../view";

/** `GET /v1/connections/providers`: each provider, and whether the caller has connected it. */
type Provider = z.infer<typeof connectionProviderView>;

/** `GET /v1/connections`: the caller's connections, never a token. */
type Connection = z.infer<typeof connectionView>;

interface Accounts {
  providers: Provider[];
  connections: Connection[];
}

/** How often the page asks whether a connection started in another tab has finished. */
const WATCH_EVERY_MS = 2_000;
/** As long as a connect link works: after that, nothing will finish. */
const WATCH_FOR_MS = 15 * 60_000;

const DISPLAY_NAMES: Record<string, string> = { github: "GitHub", google: "Google" };
const displayName = (provider: string) => DISPLAY_NAMES[provider] ?? provider;

/**
 * `/me`: who the signed-in principal is (`GET /v1/me`), and its connected accounts: each
 * provider the stage offers, connected, expired (reconnect) or not, with Connect, Reconnect and
 * Disconnect (after a confirmation). Connecting opens the provider's consent in a new tab: the
 * API's callback ends on a page of its own that says to close it, and this tab stays where it
 * is, noticing by itself when the connection has landed. API keys are not listed here: admins
 * manage them on the Keys page.
 */
export const meView: View = async (context) => {
  const accounts = await loadAccounts(context);
  // The page's one live region: what an action came to is announced from here.
  const status = h("div", { class: "me-status", role: "status" });
  const list = h("div", { class: "me-accounts" });
  const page = new AccountsPanel(context, list, status);
  if (accounts) page.show(accounts);
  return h(
    "section",
    { class: "me" },
    heading("Me", "Who you are to this stage, and your accounts that tools act with."),
    h("h2", {}, "Who you are"),
    whoAmI(context.me),
    h("h2", { id: "accounts-title" }, "Connected accounts"),
    accounts
      ? h(
          "p",
          { class: "hint" },
          "Tools that act as you at a provider use the account you connect there. Toolbus keeps its tokens sealed and never shows them.",
        )
      : notice(
          "info",
          "This stage has no connected accounts configured: its tools act with the stage's own credentials, never as you, so there is nothing to connect.",
        ),
    status,
    list,
  );
};

function whoAmI(me: Me): HTMLElement {
  return facts([
    ["ID", h("code", { class: "me-id" }, me.id)],
    ["Role", h("span", { class: "role" }, me.role)],
    [
      "Signed in with",
      me.kind === "oauth"
        ? ["an OAuth token of ", h("span", { class: "mono" }, me.issuer ?? "the stage's issuer")]
        : me.key
          ? ["the API key ", h("strong", {}, me.key.name), " (", h("code", {}, me.key.keyId), ")"]
          : "the stage's administrator key",
    ],
    ["Key created", me.key ? time(me.key.createdAt) : undefined],
    ["Key last used", me.key?.lastUsedAt ? time(me.key.lastUsedAt) : undefined],
    ["May", me.permissions.join(", ") || "nothing"],
  ]);
}

/** The providers and the caller's connections; undefined where the stage has none configured. */
async function loadAccounts(context: ViewContext): Promise<Accounts | undefined> {
  if (!context.me.connections) return undefined;
  try {
    const [providers, connections] = await Promise.all([
      context.api.get<{ providers: Provider[] }>("/v1/connections/providers", {
        signal: context.signal,
      }),
      context.api.get<{ connections: Connection[] }>("/v1/connections", {
        signal: context.signal,
      }),
    ]);
    return { providers: providers.providers, connections: connections.connections };
  } catch (error) {
    // The routes exist only where the stage configures connections.
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** The connected-accounts list, redrawn in place after every change. */
class AccountsPanel {
  private watching: { provider: string; stop: () => void } | undefined;
  private current: Accounts | undefined;

  constructor(
    private readonly context: ViewContext,
    private readonly list: HTMLElement,
    private readonly status: HTMLElement,
  ) {
    context.signal.addEventListener("abort", () => this.watching?.stop());
  }

  show(accounts: Accounts): void {
    this.current = accounts;
    if (accounts.providers.length === 0) {
      replace(this.list, notice("info", "This stage offers no provider to connect an account at."));
      return;
    }
    replace(
      this.list,
      h(
        "ul",
        { class: "me-providers", "aria-labelledby": "accounts-title" },
        ...accounts.providers.map((provider) =>
          this.item(
            provider,
            accounts.connections.find((each) => each.provider === provider.name),
          ),
        ),
      ),
    );
  }

  private async reload(): Promise<Accounts | undefined> {
    const accounts = await loadAccounts(this.context);
    if (accounts && !this.context.signal.aborted) this.show(accounts);
    return accounts;
  }

  /** Says it in the page's live region, urgently for an error, without a live region inside. */
  private say(kind: "info" | "error" | "success", ...text: (Node | string)[]): void {
    const shown = notice(kind, ...text);
    shown.removeAttribute("role");
    this.status.setAttribute("aria-live", kind === "error" ? "assertive" : "polite");
    replace(this.status, shown);
  }

  private item(provider: Provider, connection: Connection | undefined): HTMLElement {
    const name = displayName(provider.name);
    const state = connection?.status ?? provider.status;
    const actions = h("div", { class: "me-actions" });
    const showActions = () => {
      replace(
        actions,
        state === "connected"
          ? null
          : h(
              "button",
              {
                type: "button",
                "aria-label": `${state === "expired" ? "Reconnect" : "Connect"} ${name}`,
                onclick: (event: Event) =>
                  void this.connect(provider.name, event.currentTarget as HTMLButtonElement),
              },
              state === "expired" ? "Reconnect" : "Connect",
            ),
        connection
          ? h(
              "button",
              {
                type: "button",
                class: "quiet",
                "aria-label": `Disconnect ${name}`,
                onclick: () => confirmDisconnect(),
              },
              "Disconnect",
            )
          : null,
      );
    };
    // Asks first, with the focus on the choice that keeps the account; Escape keeps it too.
    const confirmDisconnect = () => {
      const keep = () => {
        showActions();
        (actions.querySelector("button") as HTMLButtonElement | null)?.focus();
      };
      const yes = h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: () => void this.disconnect(provider.name, yes),
        },
        `Yes, disconnect ${name}`,
      );
      const cancel = h(
        "button",
        {
          type: "button",
          class: "quiet",
          onclick: keep,
        },
        "Cancel",
      );
      replace(
        actions,
        h(
          "div",
          {
            class: "me-confirm",
            role: "group",
            "aria-labelledby": `confirm-${provider.name}`,
            onkeydown: (event: Event) => {
              if ((event as KeyboardEvent).key === "Escape") keep();
            },
          },
          h(
            "p",
            { id: `confirm-${provider.name}` },
            `Disconnect ${name}? Tools that act as you at ${name} stop working until you connect it again.`,
          ),
          h("div", { class: "me-confirm-buttons" }, yes, cancel),
        ),
      );
      cancel.focus();
    };
    showActions();
    return h(
      "li",
      { class: "card me-provider" },
      h(
        "div",
        { class: "me-provider-head" },
        h("h3", {}, name),
        state === "connected"
          ? h("span", { class: "badge ok" }, "Connected")
          : state === "expired"
            ? h("span", { class: "badge warn" }, "Expired")
            : h("span", { class: "badge" }, "Not connected"),
      ),
      connection
        ? facts([
            ["Scopes", connection.scopes.join(" ") || "none"],
            ["Connected since", time(connection.connectedAt)],
            ["Last refreshed", time(connection.refreshedAt)],
            [
              "Why it expired",
              connection.status === "expired"
                ? (connection.reason ?? "The provider no longer accepts its tokens.")
                : undefined,
            ],
          ])
        : h(
            "p",
            { class: "hint" },
            provider.scopes.length > 0
              ? `Connecting asks ${name} for: ${provider.scopes.join(" ")}.`
              : `Not connected: tools that act as you at ${name} cannot run yet.`,
          ),
      actions,
    );
  }

  /**
   * Asks the API for a connect link, then opens it in a new tab with `noopener`: the tab starts
   * with session storage of its own (a tab opened otherwise gets a copy of this one's, the
   * credential with it) and has no way back to this window. `noopener` also means the browser
   * does not say whether it opened the tab, so the link is always offered as well.
   */
  private async connect(provider: string, button: HTMLButtonElement): Promise<void> {
    const name = displayName(provider);
    button.disabled = true;
    try {
      const before = signature(this.current, provider);
      const link = await this.context.api.post<{ url: string; expiresAt: string }>(
        `/v1/connections/${segment(provider)}`,
      );
      const url = webLink(link.url);
      // Open to another try: a tab closed before the consent needs a new link.
      button.disabled = false;
      window.open(url, "_blank", "noopener,noreferrer");
      this.say(
        "info",
        `Finish connecting ${name} in the new tab, then come back: this page notices by itself. If no tab opened, or you closed it: `,
        h(
          "a",
          { href: url, target: "_blank", rel: "noopener noreferrer" },
          `open ${name}'s consent page`,
        ),
        ".",
      );
      this.watch(provider, before);
    } catch (error) {
      button.disabled = false;
      this.say("error", `Could not start connecting ${name}: ${(error as Error).message}`);
    }
  }

  /**
   * Asks every few seconds, and when this tab is shown again, until the connection lands. One
   * watch at a time: a newer one (Connect again) ends this one. While the tab is hidden it does
   * not ask; being shown again asks at once and starts the ticks again.
   */
  private watch(provider: string, before: string): void {
    this.watching?.stop();
    const until = Date.now() + WATCH_FOR_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let asking = false;
    const watcher = { provider, stop: () => stop() };
    const active = () => this.watching === watcher && !this.context.signal.aborted;
    const check = async () => {
      if (asking || !active()) return;
      asking = true;
      try {
        const accounts = await loadAccounts(this.context);
        if (!accounts || !active()) return;
        if (signature(accounts, provider) !== before && connected(accounts, provider)) {
          stop();
          const focused = this.list.contains(document.activeElement);
          this.show(accounts);
          this.say("success", `${displayName(provider)} is connected.`);
          // The button that had the focus is gone with the redrawn list: the news takes it.
          if (focused) this.focusStatus();
        }
      } catch {
        // A failed look is tried again at the next tick.
      } finally {
        asking = false;
      }
    };
    /** The next tick, the only one waiting; none while hidden, or once over. */
    const schedule = () => {
      clearTimeout(timer);
      timer = undefined;
      if (!active()) return;
      if (Date.now() > until) return stop();
      if (document.hidden) return;
      timer = setTimeout(() => void check().then(schedule), WATCH_EVERY_MS);
    };
    const onShown = () => {
      if (!document.hidden) void check().then(schedule);
    };
    const stop = () => {
      clearTimeout(timer);
      timer = undefined;
      document.removeEventListener("visibilitychange", onShown);
      window.removeEventListener("focus", onShown);
      if (this.watching === watcher) this.watching = undefined;
    };
    document.addEventListener("visibilitychange", onShown);
    window.addEventListener("focus", onShown);
    this.watching = watcher;
    schedule();
  }

  private async disconnect(provider: string, button: HTMLButtonElement): Promise<void> {
    const name = displayName(provider);
    button.disabled = true;
    try {
      const outcome = await this.context.api.delete<{ removed: boolean; revoked: boolean }>(
        `/v1/connections/${segment(provider)}`,
      );
      if (this.watching?.provider === provider) this.watching.stop();
      await this.reload();
      this.say(
        "success",
        outcome.revoked
          ? `${name} is disconnected, and its tokens are revoked at ${name}.`
          : `${name} is disconnected. ${name} took no revocation: remove Toolbus's access in your ${name} settings to end it there too.`,
      );
    } catch (error) {
      button.disabled = false;
      this.say("error", `Could not disconnect ${name}: ${(error as Error).message}`);
      await this.reload().catch(() => undefined);
    }
    this.focusStatus();
  }

  private focusStatus(): void {
    const shown = this.status.firstElementChild as HTMLElement | null;
    if (shown) {
      shown.tabIndex = -1;
      shown.focus();
    }
  }
}

/** What changes when a connection lands: its status and when it was made. */
function signature(accounts: Accounts | undefined, provider: string): string {
  const connection = accounts?.connections.find((each) => each.provider === provider);
  return connection ? `${connection.status} ${connection.connectedAt}` : "none";
}

function connected(accounts: Accounts, provider: string): boolean {
  return accounts.connections.some(
    (each) => each.provider === provider && each.status === "connected",
  );
}

/** The connect link, if it is a web address: anything else is not opened. */
function webLink(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) {
    throw new Error("the API's connect link is not a web address.");
  }
  return url.href;
}
