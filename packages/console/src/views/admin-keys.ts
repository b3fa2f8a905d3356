import type { apiKeyCreatedView, apiKeyListView, apiKeyView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import { h, heading, notice, replace, time } from "../dom";
import type { View, ViewContext } from "../view";
import { confirmButton, focusNotice, onSubmit } from "../widgets";
import { adminTable, field } from "./admin-kit";

/** A key's record as `GET /v1/keys` lists it: never the key itself. */
type KeyRecord = z.infer<typeof apiKeyView>;
/** `POST /v1/keys`: the key, in this answer only. */
type CreatedKey = z.infer<typeof apiKeyCreatedView>;

/**
 * `/admin/keys`: the stage's API keys (never the keys themselves), creating one — shown once,
 * here — and revoking one after an inline confirmation. A role without `admin` gets the API's
 * 403, which the shell shows as "Not allowed".
 */
export const keysView: View = async (context) => {
  const first = await listKeys(context);
  const status = h("div", { class: "admin-status" });
  const list = h("div", { class: "admin-list" });

  const reload = async () => {
    renderList(await listKeys(context));
  };
  const renderList = (keys: KeyRecord[]) => {
    replace(list, keysTable(context, keys, status, reload));
  };
  renderList(first);

  return h(
    "section",
    { class: "admin" },
    heading(
      "Keys",
      "API keys of this stage. A key is shown once, when it is made; only its hash is kept.",
    ),
    createForm(context, status, reload),
    status,
    h("h2", {}, "All keys"),
    list,
  );
};

async function listKeys(context: ViewContext): Promise<KeyRecord[]> {
  const { keys } = await context.api.get<z.infer<typeof apiKeyListView>>("/v1/keys", {
    signal: context.signal,
  });
  // Newest first: the one just made is at the top.
  return [...keys].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

function createForm(
  context: ViewContext,
  status: HTMLElement,
  reload: () => Promise<void>,
): HTMLElement {
  const name = h("input", { type: "text", name: "name", autocomplete: "off", maxlength: 120 });
  const role = h(
    "select",
    { name: "role" },
    ...context.me.roles.map((each) => h("option", { value: each }, each)),
  );
  // `roles` is least privileged first: the first is the default, the safe choice for a new key.
  const problem = h("div", { class: "form-problem" });
  const submit = h("button", { type: "submit" }, "Create key");
  const form = h(
    "form",
    { class: "card admin-form", "aria-labelledby": "create-key-title" },
    h("h2", { id: "create-key-title" }, "Create a key"),
    h(
      "div",
      { class: "admin-form-row" },
      field("Key name", name, "Who or what will use it, e.g. ci-deploy."),
      field("Role", role),
    ),
    submit,
    problem,
  );
  onSubmit(form, submit, problem, async () => {
    const created = await context.api.post<CreatedKey>("/v1/keys", {
      name: name.value.trim(),
      role: role.value,
    });
    name.value = "";
    replace(status, createdPanel(created));
    await reload();
    status.querySelector<HTMLElement>(".created-title")?.focus();
  });
  return form;
}

/** The new key, once: with a plain warning, a field to select it from and a Copy button. */
function createdPanel(created: CreatedKey): HTMLElement {
  const keyField = h("input", {
    type: "text",
    readonly: true,
    value: created.key,
    class: "mono secret-value",
    spellcheck: "false",
    autocomplete: "off",
  });
  const copied = h("p", { class: "copy-status", role: "status" });
  const copy = h("button", { type: "button" }, "Copy");
  copy.addEventListener("click", () => {
    void (async () => {
      keyField.select();
      try {
        if (!navigator.clipboard) throw new Error("no clipboard");
        await navigator.clipboard.writeText(created.key);
        replace(copied, "Copied to the clipboard.");
      } catch {
        replace(
          copied,
          "This page may not use the clipboard: the key is selected, press Ctrl+C (⌘C) to copy it.",
        );
      }
    })();
  });
  keyField.addEventListener("focus", () => keyField.select());
  return h(
    "div",
    { class: "card created-key" },
    h(
      "h2",
      { class: "created-title", tabindex: "-1" },
      `Key ${created.name} created (${created.role})`,
    ),
    notice(
      "info",
      h("strong", {}, "Copy it now: it is not shown again."),
      " Toolbus keeps only its hash; if it is lost, revoke it and make another.",
    ),
    h("div", { class: "copy-row" }, field("New key", keyField), copy),
    copied,
  );
}

function keysTable(
  context: ViewContext,
  keys: KeyRecord[],
  status: HTMLElement,
  reload: () => Promise<void>,
): HTMLElement {
  if (keys.length === 0) return notice("info", "This stage has no keys yet.");
  return adminTable(
    "API keys",
    ["Name", "Role", "Created", "Last used", "Status", "Actions"],
    keys.map((key) => [
      h(
        "span",
        { class: "key-name" },
        key.name,
        key.actsFor ? h("span", { class: "badge warn" }, "acts for users") : null,
      ),
      key.role,
      time(key.createdAt),
      key.lastUsedAt ? time(key.lastUsedAt) : h("span", { class: "hint" }, "never"),
      key.revokedAt
        ? [h("span", { class: "badge off" }, "revoked"), " ", time(key.revokedAt)]
        : h("span", { class: "badge ok" }, "active"),
      key.revokedAt
        ? ""
        : confirmButton({
            label: "Revoke",
            name: `Revoke key ${key.name}`,
            question:
              key.keyId === context.me.id
                ? `Revoke key ${key.name}? You are signed in with it: the console will sign you out.`
                : `Revoke key ${key.name}?`,
            confirm: "Revoke",
            keep: "Keep",
            act: async () => {
              await context.api.delete(`/v1/keys/${encodeURIComponent(key.keyId)}`);
              replace(
                status,
                notice("success", `Key ${key.name} is revoked: the API refuses it from now on.`),
              );
              await reload();
              focusNotice(status);
            },
          }),
    ]),
  );
}
