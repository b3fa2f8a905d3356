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
    render();
  };
  const apiFor = (credential: string) =>
    new Api(credential, () =>
      signOut(
        "Your session ended: the API refused the key or token (revoked or expired). Sign in again.",
      ),
    );

  const signIn = async (credential: string): Promise<string | undefined> => {
    const api = apiFor(credential);
    try {
      const me = await new Api(credential, () => {}).get<Me>("/v1/me");
      storeCredential(credential);
      session = { api, me };
      ended = undefined;
      if (!match(routes, location.hash)) location.hash = "#/catalog";
      render();
      return undefined;
    } catch (error) {
      return error instanceof ApiError && error.status === 401
        ? "That key or token was refused."
        : `Could not sign in: ${(error as Error).message}`;
    }
  };

  const render = async () => {
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
      if (stored && !ended) {
        if (!(await signIn(stored))) return;
        forgetCredential();
      }
      document.title = "Sign in · Toolbus";
      replace(
        root,
        renderSignIn({
          signIn,
          ...(ended ? { ended } : {}),
          ...(problem ? { problem } : {}),
        }),
      );
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
      refresh: () => void render(),
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
    title?.focus();
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
