import { h, notice } from "../dom";

export interface SignInOptions {
  /** Tries the credential; resolves with a problem to show, or undefined once signed in. */
  signIn(credential: string): Promise<string | undefined>;
  /** Why the last session ended, when it ended on its own. */
  ended?: string;
}

/** The sign-in page: an API key, kept in this tab only. */
export function renderSignIn(options: SignInOptions): HTMLElement {
  const problem = h("div", { "aria-live": "assertive" });
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
  return h(
    "main",
    { id: "main", class: "narrow" },
    h("h1", {}, "Sign in to Toolbus"),
    options.ended && notice("info", options.ended),
    problem,
    form,
  );
}
