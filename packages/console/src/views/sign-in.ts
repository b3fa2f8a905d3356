import { h, notice } from "../dom";
import { beginOAuthSignIn, discoverOAuthSignIn, type OAuthSignIn } from "../oauth";

export interface SignInOptions {
  /** Tries the credential; resolves with a problem to show, or undefined once signed in. */
  signIn(credential: string): Promise<string | undefined>;
  /** Why the last session ended, when it ended on its own. */
  ended?: string;
  /**
   * Why the last sign-in with the issuer came to nothing (declined, refused, tampered with), or
   * why the tab's sign-in could not be checked.
   */
  problem?: string;
  /** Asks the API again about the sign-in this tab keeps, when it could not be asked. */
  retry?: () => void;
}

/**
 * The sign-in page: an API key, kept in this tab only; and, where the stage's console is
 * registered at its OAuth issuer, a button that signs in there instead (oauth.ts).
 */
export function renderSignIn(options: SignInOptions): HTMLElement {
  // Not a live region itself: each problem shown in it is an alert, announced once.
  const problem = h(
    "div",
    { class: "sign-in-problem" },
    options.problem && notice("error", options.problem),
    options.retry &&
      h("button", { type: "button", class: "quiet", onclick: options.retry }, "Try again"),
  );
  const input = h("input", {
    id: "credential",
    name: "credential",
    type: "password",
    autocomplete: "off",
    spellcheck: "false",
    required: true,
    "aria-describedby": "credential-help",
  });
  const button = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    {
      class: "card sign-in",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        button.disabled = true;
        problem.replaceChildren();
        const refused = await options.signIn(input.value.trim());
        button.disabled = false;
        if (refused) {
          problem.replaceChildren(notice("error", refused));
          input.focus();
        }
      },
    },
    h("label", { for: "credential" }, "API key"),
    input,
    h(
      "p",
      { id: "credential-help", class: "hint" },
      "Kept in this browser tab only and sent as a bearer token; closing the tab forgets it.",
    ),
    button,
  );
  // Busy while the console asks whether the stage's issuer may sign people in here.
  const other = h("div", { class: "sign-in-other", "aria-busy": "true" });
  void discoverOAuthSignIn().then((oauth) => {
    if (oauth) other.replaceChildren(issuerSignIn(oauth, problem));
    other.removeAttribute("aria-busy");
  });
  return h(
    "main",
    { id: "main", class: "narrow" },
    h("h1", { tabindex: "-1" }, "Sign in to Toolbus"),
    options.ended && endedNotice(options.ended),
    problem,
    form,
    other,
  );
}

/** The issuer's sign-in: a button that leaves for the issuer and comes back signed in. */
function issuerSignIn(oauth: OAuthSignIn, problem: HTMLElement): HTMLElement {
  const button = h(
    "button",
    {
      type: "button",
      class: "quiet",
      "aria-describedby": "issuer-help",
      onclick: async () => {
        button.disabled = true;
        problem.replaceChildren();
        try {
          await beginOAuthSignIn(oauth, location.hash || undefined);
        } catch (error) {
          button.disabled = false;
          problem.replaceChildren(notice("error", (error as Error).message));
        }
      },
    },
    `Sign in with ${oauth.name}`,
  );
  return h(
    "section",
    { class: "card sign-in", "aria-labelledby": "issuer-title" },
    h("h2", { id: "issuer-title" }, "Or with your account"),
    h(
      "p",
      { id: "issuer-help", class: "hint" },
      "Signs in at ",
      h("span", { class: "mono" }, oauth.issuer),
      " and comes back here; the token it gives is kept in this tab only, as a key would be.",
    ),
    button,
  );
}

/** Why the session ended: the shell focuses it, so it is read out. */
function endedNotice(text: string): HTMLElement {
  const shown = notice("info", text);
  shown.id = "session-ended";
  shown.tabIndex = -1;
  return shown;
}
