import { h, notice } from "../dom";
import { segment, type ViewContext } from "../view";
import { RUN_ID } from "./run-model";

/** A form that opens a run's timeline by its id. */
export function openRunForm(context: Pick<ViewContext, "navigate">): HTMLElement {
  const problem = h("div", { id: "open-run-problem" });
  const input = h("input", {
    id: "open-run-id",
    name: "runId",
    type: "text",
    required: true,
    autocomplete: "off",
    spellcheck: "false",
    maxlength: 128,
    "aria-describedby": "open-run-help open-run-problem",
  });
  return h(
    "form",
    {
      class: "card open-run",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const runId = input.value.trim();
        if (!RUN_ID.test(runId)) {
          input.setAttribute("aria-invalid", "true");
          problem.replaceChildren(
            notice("error", "A run id is 1-128 letters, digits, and . _ : - characters."),
          );
          input.focus();
          return;
        }
        input.removeAttribute("aria-invalid");
        problem.replaceChildren();
        context.navigate(`/runs/${segment(runId)}`);
      },
    },
    h("h2", {}, "Open a run"),
    h("label", { for: "open-run-id" }, "Run id"),
    input,
    h(
      "p",
      { id: "open-run-help", class: "hint" },
      "The id an agent calls under, e.g. run-42: its timeline follows the run live.",
    ),
    problem,
    h("button", { type: "submit" }, "Open run"),
  );
}
