import { Api, ApiError } from "./api";
import { h, heading, notice, replace } from "./dom";
import { finishOAuthSignIn } from "./oauth";
import { match, type Route } from "./router";
import { forgetCredential, storeCredential, storedCredential } from "./session";
import type { Me, ViewContext } from "./view";
import { renderSignIn } from "./views/sign-in";

/**
 * The console's frame: sign-in, the navigation the role may use, and the page the location's
 * hash names. Each page is rendered fresh when the hash changes; leaving a page aborts its
 * signal, which ends its live streams.
 */
export function startConsole(root: HTMLElement, routes: readonly Route[]): void {
  let leave = new AbortController();
  let session: { api: Api; me: Me } | undefined;
  let ended: string | undefined;
  /** A return from the OAuth issuer this load may be (oauth.ts), taken by the first render. */
  let returning: ReturnType<typeof finishOAuthSignIn> | undefined = finishOAuthSignIn();

  const signOut = (reason?: string) => {
    forgetCredential();
    session = undefined;
    ended = reason;
    leave.abort();
    void render();
  };
  const apiFor = (credential: string) =>
    new Api(credential, () =>
      signOut(
        "Your session ended: the API refused the key or token (revoked or expired). Sign in again.",
      ),
    );

  /** Signs in with the credential, or says why not and whether the API refused it (a 401). */
  const attempt = async (
    credential: string,
  ): Promise<{ refused: boolean; problem: string; reason: string } | undefined> => {
    try {
      const me = await new Api(credential, () => {}).get<Me>("/v1/me");
      storeCredential(credential);
      session = { api: apiFor(credential), me };
      ended = undefined;
      // A new hash renders on its hashchange; otherwise the page is rendered here, once.
      if (!match(routes, location.hash)) location.hash = "#/catalog";
      else void render();
      return undefined;
    } catch (error) {
      const refused = error instanceof ApiError && error.status === 401;
      const reason = (error as Error).message;
      return {
        refused,
        reason,
        problem: refused ? "That key or token was refused." : `Could not sign in: ${reason}`,
      };
    }
  };
  const signIn = async (credential: string) => (await attempt(credential))?.problem;

  /**
   * Renders the page the hash names. `navigated` (a new hash, the first render, signing in or
   * out) moves the focus to the page's heading, so the new page is announced; a refresh of the
   * same page leaves the focus alone.
   */
  const render = async (navigated = true) => {
    leave.abort();
    leave = new AbortController();
    const signal = leave.signal;
    if (!session) {
      let problem: string | undefined;
      const arriving = returning;
      returning = undefined;
      const returned = await arriving;
      if (returned && "token" in returned) {
        // Back on the page the person started from, without a hashchange of its own.
        if (returned.returnTo && match(routes, returned.returnTo)) {
          history.replaceState(null, "", `${location.pathname}${returned.returnTo}`);
        }
        problem = await signIn(returned.token);
        if (!problem) return;
      } else if (returned) problem = returned.problem;
      const stored = problem ? undefined : storedCredential();
      let retry: (() => void) | undefined;
      if (stored && !ended) {
        const failed = await attempt(stored);
        if (!failed) return;
        if (failed.refused) {
          // Revoked or expired: the credential is no good, so it is forgotten.
          forgetCredential();
        } else {
          // The API could not be asked (offline, a failure of its own): the credential may be
          // good, so it is kept, and asking again is one click away.
          problem = `Could not check your sign-in with the API (${failed.reason}). It is kept in this tab: try again.`;
          retry = () => void render();
        }
      }
      if (signal.aborted) return;
      document.title = "Sign in · Toolbus";
      const page = renderSignIn({
        signIn,
        ...(ended ? { ended } : {}),
        ...(problem ? { problem } : {}),
        ...(retry ? { retry } : {}),
      });
      replace(root, page);
      // Why the session ended is news: it takes the focus, so it is read out.
      const first = ended
        ? page.querySelector<HTMLElement>("#session-ended")
        : page.querySelector<HTMLElement>("h1");
      if (navigated) first?.focus();
      return;
    }
    const found = match(routes, location.hash);
    if (!found) {
      location.hash = "#/catalog";
      return;
    }
    const { api, me } = session;
    const main = h("main", { id: "main", tabindex: "-1" });
    replace(
      root,
      frame(routes, found.route, me, () => signOut()),
      main,
    );
    const context: ViewContext = {
      api,
      me,
      params: found.params,
      query: found.query,
      signal,
      can: (permission) => me.permissions.includes(permission),
      navigate: (path) => {
        location.hash = `#${path}`;
      },
      refresh: () => void render(false),
    };
    replace(main, h("p", { class: "loading", role: "status" }, "Loading…"));
    try {
      const page = await found.route.view(context);
      if (signal.aborted) return;
      replace(main, page);
    } catch (error) {
      if (signal.aborted) return;
      replace(main, failurePage(error));
    }
    const title = main.querySelector("h1");
    document.title = `${title?.textContent ?? "Toolbus"} · Toolbus console`;
    if (navigated) title?.focus();
  };

  window.addEventListener("hashchange", () => void render());
  void render();
}

function frame(routes: readonly Route[], current: Route, me: Me, signOut: () => void): HTMLElement {
  const links = routes
    .filter((route) => route.nav && (!route.needs || me.permissions.includes(route.needs)))
    .map((route) => {
      const active = route === current || current.path.startsWith(`${route.path}/`);
      return h(
        "li",
        {},
        h(
          "a",
          { href: `#${route.path}`, ...(active ? { "aria-current": "page" } : {}) },
          route.nav,
        ),
      );
    });
  return h(
    "header",
    { class: "top" },
    h("a", { class: "skip", href: "#main", onclick: skipToMain }, "Skip to content"),
    h("a", { class: "brand", href: "#/catalog" }, "Toolbus"),
    h("nav", { "aria-label": "Console" }, h("ul", {}, ...links)),
    h(
      "div",
      { class: "who" },
      h("span", {}, me.id, " ", h("span", { class: "role" }, me.role)),
      h("button", { type: "button", class: "quiet", onclick: signOut }, "Sign out"),
    ),
  );
}

/** The skip link moves focus without changing the hash, which names the page. */
function skipToMain(event: Event): void {
  event.preventDefault();
  document.getElementById("main")?.focus();
}

function failurePage(error: unknown): HTMLElement {
  if (error instanceof ApiError && error.status === 403) {
    return h(
      "section",
      {},
      heading("Not allowed", "Your role may not see or do this."),
      notice("error", error.message),
      h("p", {}, h("a", { href: "#/catalog" }, "Back to the catalog")),
    );
  }
  if (error instanceof ApiError && error.status === 404) {
    return h("section", {}, heading("Not found"), notice("error", error.message));
  }
  const message = error instanceof Error ? error.message : String(error);
  return h("section", {}, heading("Something went wrong"), notice("error", message));
}
