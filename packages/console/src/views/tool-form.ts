import { h, replace } from "../dom";
import { errorText } from "../widgets";

/**
 * The Try-it form's fields, generated from a tool's input JSON Schema: a string is a text box
 * (a text area when it may be long), a number a number box, a boolean a checkbox, an enum a
 * list to choose from, and anything else (arrays, objects, unions) a JSON text area that says
 * at once when its text does not parse. An input that is a union of objects told apart by one
 * constant property (`action`) gets a choice of that property, and the fields of the chosen
 * kind. Every field is labelled, its description is its help text, and required ones say so.
 * Validation is the API's: its 400 details are shown under the fields they name.
 */

type Schema = Record<string, unknown>;

export interface SchemaForm {
  /** The fields, to place inside a form. */
  element: HTMLElement;
  /** The input to send, or the fields whose text could not be read (their errors are shown). */
  collect(): { input: unknown; problems: number };
  /** Shows the API's validation details under the fields they name; the rest at the top. */
  showErrors(details: unknown, fallback: string): void;
  clearErrors(): void;
  /** Puts an example's input in the fields. */
  fill(input: unknown): void;
  /** The first field showing an error, or the first field. */
  firstProblem(): HTMLElement | undefined;
}

interface Field {
  name: string;
  control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  error: HTMLElement;
  /** The value to send; `omit` leaves it out; `problem` is a text that cannot be read. */
  read(): { value?: unknown; omit?: boolean; problem?: string };
  write(value: unknown): void;
}

const LONG_TEXT = 1000;

function isObject(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Follows a local `$ref` (`#/$defs/x`) of the document; anything else stays as it is. */
function deref(schema: unknown, root: Schema, depth = 0): Schema {
  if (!isObject(schema)) return {};
  const ref = schema.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#/") || depth > 8) return schema;
  let target: unknown = root;
  for (const part of ref.slice(2).split("/")) {
    target = isObject(target) ? target[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
  }
  return deref(target, root, depth + 1);
}

/** A union with `null` is its other member, left out when empty. */
function unwrapNullable(schema: Schema, root: Schema): Schema {
  const members = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(members) && members.length === 2) {
    const others = members.map((m) => deref(m, root)).filter((m) => m.type !== "null");
    if (others.length === 1 && others[0]) return { ...others[0], ...pick(schema) };
  }
  return schema;
}

function pick(schema: Schema): Schema {
  const kept: Schema = {};
  for (const key of ["title", "description", "default"]) {
    if (schema[key] !== undefined) kept[key] = schema[key];
  }
  return kept;
}

function typeOf(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) {
    const real = type.filter((t) => t !== "null");
    return real.length === 1 ? String(real[0]) : undefined;
  }
  return undefined;
}

function choicesOf(schema: Schema): unknown[] | undefined {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => v === null || typeof v !== "object")) {
    return schema.enum;
  }
  if (schema.const !== undefined && (schema.const === null || typeof schema.const !== "object")) {
    return [schema.const];
  }
  return undefined;
}

/** A short line of the constraints a person would want before typing. */
function constraints(schema: Schema, kind: string): string {
  const parts: string[] = [];
  if (kind === "json") {
    const type = typeOf(schema);
    parts.push(
      type === "array"
        ? 'JSON: a list, e.g. ["a", "b"]'
        : type === "object"
          ? 'JSON: an object, e.g. {"key": "value"}'
          : "JSON",
    );
  }
  const { minimum, maximum, minLength, maxLength, format } = schema;
  if (typeof minimum === "number" && typeof maximum === "number") {
    parts.push(`${minimum} to ${maximum}`);
  } else if (typeof minimum === "number") parts.push(`at least ${minimum}`);
  else if (typeof maximum === "number") parts.push(`at most ${maximum}`);
  if (typeof maxLength === "number" && maxLength < Number.MAX_SAFE_INTEGER) {
    parts.push(`up to ${maxLength.toLocaleString()} characters`);
  } else if (typeof minLength === "number" && minLength > 1) {
    parts.push(`at least ${minLength} characters`);
  }
  if (typeof format === "string") parts.push(`format: ${format}`);
  if (schema.default !== undefined) parts.push(`default: ${JSON.stringify(schema.default)}`);
  return parts.join("; ");
}

function fieldFor(
  name: string,
  raw: unknown,
  required: boolean,
  root: Schema,
  idPrefix: string,
): { wrap: HTMLElement; field: Field } {
  const schema = unwrapNullable(deref(raw, root), root);
  const id = `${idPrefix}-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const helpId = `${id}-help`;
  const errorId = `${id}-error`;
  const error = h("p", { id: errorId, class: "field-error", hidden: true });
  const choices = choicesOf(schema);
  const type = typeOf(schema);
  const kind = choices
    ? "enum"
    : type === "string"
      ? "string"
      : type === "number" || type === "integer"
        ? "number"
        : type === "boolean"
          ? "boolean"
          : "json";
  const description = typeof schema.description === "string" ? schema.description : "";
  const rules = constraints(schema, kind);
  const described = [description || rules ? helpId : "", errorId].filter(Boolean).join(" ");
  const common = {
    id,
    name,
    "aria-describedby": described,
    ...(required ? { required: true, "aria-required": "true" } : {}),
  };
  const fallback = schema.default;
  let field: Field;
  let control: Field["control"];

  if (kind === "enum" && choices) {
    const keep = required && choices.length === 1;
    const select = h(
      "select",
      common,
      !keep &&
        h(
          "option",
          { value: "" },
          fallback !== undefined ? `(default: ${String(fallback)})` : "(not set)",
        ),
      ...choices.map((choice) => h("option", { value: JSON.stringify(choice) }, String(choice))),
    );
    control = select;
    field = {
      name,
      control,
      error,
      read: () => (select.value === "" ? { omit: true } : { value: JSON.parse(select.value) }),
      write: (value) => {
        select.value = value === undefined ? "" : JSON.stringify(value);
      },
    };
  } else if (kind === "string") {
    const max = typeof schema.maxLength === "number" ? schema.maxLength : 0;
    const long = max > LONG_TEXT;
    const box = long
      ? h("textarea", { ...common, rows: 6 })
      : h("input", {
          ...common,
          type: "text",
          ...(max ? { maxlength: max } : {}),
          ...(fallback !== undefined ? { placeholder: String(fallback) } : {}),
        });
    control = box;
    field = {
      name,
      control,
      error,
      // A required field left empty is sent empty: the API says what it needs.
      read: () => (box.value === "" && !required ? { omit: true } : { value: box.value }),
      write: (value) => {
        box.value = value === undefined || value === null ? "" : String(value);
      },
    };
  } else if (kind === "number") {
    const box = h("input", {
      ...common,
      type: "number",
      inputmode: type === "integer" ? "numeric" : "decimal",
      step: type === "integer" ? "1" : "any",
      ...(typeof schema.minimum === "number" ? { min: schema.minimum } : {}),
      ...(typeof schema.maximum === "number" ? { max: schema.maximum } : {}),
      ...(fallback !== undefined ? { placeholder: String(fallback) } : {}),
    });
    control = box;
    field = {
      name,
      control,
      error,
      read: () => {
        if (box.value.trim() === "") {
          return box.validity.badInput ? { problem: "Not a number." } : { omit: true };
        }
        const value = Number(box.value);
        return Number.isFinite(value) ? { value } : { problem: "Not a number." };
      },
      write: (value) => {
        box.value = typeof value === "number" ? String(value) : "";
      },
    };
  } else if (kind === "boolean") {
    const box = h("input", { ...common, type: "checkbox", checked: fallback === true });
    // Sent when required, when it has a default, or once the person changed it.
    let touched = false;
    box.addEventListener("change", () => {
      touched = true;
    });
    control = box;
    field = {
      name,
      control,
      error,
      read: () =>
        required || touched || fallback !== undefined ? { value: box.checked } : { omit: true },
      write: (value) => {
        box.checked = value === true;
        touched = value !== undefined;
      },
    };
  } else {
    const area = h("textarea", {
      ...common,
      rows: 4,
      class: "mono",
      spellcheck: "false",
    });
    const check = () => {
      const problem = parseProblem(area.value);
      setError(area, error, problem ? [problem] : []);
    };
    area.addEventListener("input", check);
    control = area;
    field = {
      name,
      control,
      error,
      read: () => {
        if (area.value.trim() === "") return { omit: true };
        const problem = parseProblem(area.value);
        return problem ? { problem } : { value: JSON.parse(area.value) };
      },
      write: (value) => {
        area.value = value === undefined ? "" : JSON.stringify(value, null, 2);
        check();
      },
    };
  }

  const label = h(
    "label",
    { for: id },
    typeof schema.title === "string" ? schema.title : name,
    required && h("span", { class: "req" }, " (required)"),
  );
  const help =
    (description || rules) &&
    h(
      "p",
      { id: helpId, class: "hint field-help" },
      description,
      description && rules ? " " : "",
      rules && h("span", { class: "rules" }, `(${rules})`),
    );
  const wrap =
    kind === "boolean"
      ? h(
          "div",
          { class: "field check" },
          h("div", { class: "check-row" }, control, label),
          help,
          error,
        )
      : h("div", { class: "field" }, label, help, control, error);
  return { wrap, field };
}

function parseProblem(text: string): string | undefined {
  if (text.trim() === "") return undefined;
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return `Not valid JSON: ${errorText(error)}`;
  }
}

function setError(control: Field["control"], error: HTMLElement, messages: string[]): void {
  if (messages.length === 0) {
    error.hidden = true;
    replace(error);
    control.removeAttribute("aria-invalid");
    return;
  }
  error.hidden = false;
  replace(error, messages.join(" "));
  control.setAttribute("aria-invalid", "true");
}

/** A union of objects told apart by one property with a constant in each (`action`). */
function discriminated(
  schema: Schema,
  root: Schema,
): { key: string; variants: { value: unknown; schema: Schema }[] } | undefined {
  const members = (schema.oneOf ?? schema.anyOf) as unknown;
  if (!Array.isArray(members) || members.length < 2) return undefined;
  const variants = members.map((m) => deref(m, root));
  if (!variants.every((v) => isObject(v.properties))) return undefined;
  const first = variants[0]?.properties as Schema;
  for (const key of Object.keys(first)) {
    const values = variants.map((v) => {
      const property = deref((v.properties as Schema)[key], root);
      const choices = choicesOf(property);
      return choices?.length === 1 ? choices[0] : undefined;
    });
    if (values.some((v) => v === undefined)) continue;
    if (new Set(values.map((v) => JSON.stringify(v))).size !== values.length) continue;
    return { key, variants: variants.map((v, i) => ({ value: values[i], schema: v })) };
  }
  return undefined;
}

export function schemaForm(input: Record<string, unknown>, idPrefix = "field"): SchemaForm {
  const root = input;
  const top = deref(root, root);
  const formErrors = h("div", { class: "form-errors", hidden: true });
  const element = h("div", { class: "schema-form" }, formErrors);
  let fields: Field[] = [];

  const showFormErrors = (messages: string[]) => {
    formErrors.hidden = messages.length === 0;
    replace(
      formErrors,
      messages.length > 0 &&
        h(
          "div",
          { class: "notice error", role: "alert" },
          h("ul", {}, ...messages.map((m) => h("li", {}, m))),
        ),
    );
  };

  const objectFields = (schema: Schema, skip?: string): { wraps: HTMLElement[]; made: Field[] } => {
    const properties = (schema.properties ?? {}) as Schema;
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    const wraps: HTMLElement[] = [];
    const made: Field[] = [];
    for (const [name, property] of Object.entries(properties)) {
      if (name === skip) continue;
      const { wrap, field } = fieldFor(name, property, required.has(name), root, idPrefix);
      wraps.push(wrap);
      made.push(field);
    }
    return { wraps, made };
  };

  const union = discriminated(top, root);
  let collectExtra: () => Record<string, unknown> = () => ({});
  let beforeFill: (value: Record<string, unknown>) => void = () => {};

  if (union) {
    const { key, variants } = union;
    const id = `${idPrefix}-${key}`;
    const holder = h("div", { class: "variant-fields" });
    const choose = h(
      "select",
      { id, name: key, required: true, "aria-required": "true", "aria-describedby": `${id}-help` },
      ...variants.map((variant) => {
        const property = deref((variant.schema.properties as Schema)[key], root);
        const about = typeof property.description === "string" ? ` — ${property.description}` : "";
        return h(
          "option",
          { value: JSON.stringify(variant.value) },
          `${String(variant.value)}${about}`,
        );
      }),
    );
    const show = () => {
      const variant = variants.find((v) => JSON.stringify(v.value) === choose.value) ?? variants[0];
      const { wraps, made } = variant ? objectFields(variant.schema, key) : { wraps: [], made: [] };
      fields = made;
      replace(holder, wraps);
    };
    choose.addEventListener("change", show);
    element.append(
      h(
        "div",
        { class: "field" },
        h("label", { for: id }, key, h("span", { class: "req" }, " (required)")),
        h(
          "p",
          { id: `${id}-help`, class: "hint field-help" },
          `Which kind of call: the fields below follow it.`,
        ),
        choose,
      ),
      holder,
    );
    show();
    collectExtra = () => ({ [key]: JSON.parse(choose.value) });
    beforeFill = (value) => {
      if (value[key] !== undefined) {
        choose.value = JSON.stringify(value[key]);
        show();
      }
    };
  } else if (isObject(top.properties) && (typeOf(top) === "object" || top.type === undefined)) {
    const { wraps, made } = objectFields(top);
    fields = made;
    if (wraps.length === 0) {
      element.append(h("p", { class: "hint" }, "This tool takes no input."));
    }
    element.append(...wraps);
  } else if (typeOf(top) === "object" && !top.properties && !top.oneOf && !top.anyOf) {
    // An object with no properties named: free-form JSON.
    const { wrap, field } = fieldFor(
      "input",
      { description: "The whole input, as a JSON object.", type: "object" },
      false,
      root,
      idPrefix,
    );
    fields = [{ ...field, name: "" }];
    element.append(wrap);
  } else {
    const { wrap, field } = fieldFor(
      "input",
      { description: "The whole input, as JSON: the schema below says what it takes." },
      true,
      root,
      idPrefix,
    );
    fields = [{ ...field, name: "" }];
    element.append(wrap);
  }

  const whole = () => fields.length === 1 && fields[0]?.name === "";

  return {
    element,
    collect() {
      let problems = 0;
      const input: Record<string, unknown> = { ...collectExtra() };
      for (const field of fields) {
        const read = field.read();
        if (read.problem) {
          problems += 1;
          setError(field.control, field.error, [read.problem]);
          continue;
        }
        if (whole()) return { input: read.omit ? {} : read.value, problems };
        if (!read.omit) input[field.name] = read.value;
      }
      return { input, problems };
    },
    showErrors(details, fallback) {
      const byField = new Map<Field, string[]>();
      const rest: string[] = [];
      for (const detail of Array.isArray(details) ? details : []) {
        if (!isObject(detail)) continue;
        const rawPath = detail.path;
        const path = Array.isArray(rawPath) ? rawPath.join(".") : String(rawPath ?? "");
        const message = String(detail.message ?? "");
        const [head = "", ...tail] = path.split(".");
        const field = whole() ? fields[0] : fields.find((f) => f.name === head);
        if (!field || (!whole() && head === "")) {
          rest.push(path ? `${path}: ${message}` : message);
          continue;
        }
        const where = whole() ? path : tail.join(".");
        const list = byField.get(field) ?? [];
        list.push(where ? `${where}: ${message}` : message);
        byField.set(field, list);
      }
      for (const [field, messages] of byField) setError(field.control, field.error, messages);
      if (byField.size === 0 && rest.length === 0) rest.push(fallback);
      showFormErrors(rest);
    },
    clearErrors() {
      for (const field of fields) setError(field.control, field.error, []);
      showFormErrors([]);
    },
    fill(value) {
      if (whole()) {
        fields[0]?.write(value);
        return;
      }
      const object = isObject(value) ? value : {};
      beforeFill(object);
      for (const field of fields) field.write(object[field.name]);
    },
    firstProblem() {
      const invalid = fields.find((f) => f.control.getAttribute("aria-invalid") === "true");
      if (invalid) return invalid.control;
      if (!formErrors.hidden) return formErrors;
      return fields[0]?.control;
    },
  };
}
