/**
 * A readable, dependency-free rendering of the OpenAPI document: no scripts, no CDN, every
 * string escaped. It shows what a newcomer needs to make a first call; /openapi.json has the
 * rest.
 */

type Json = Record<string, unknown>;

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

export function renderDocs(openapi: object): string {
  const document = openapi as Json;
  const info = (document.info ?? {}) as Json;
  const components = ((document.components ?? {}) as Json).schemas as Json | undefined;
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const sections: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (operation) sections.push(renderOperation(method, path, operation, components ?? {}));
    }
  }
  const title = text(info.title) || "API";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem 1.5rem;color:#1b1b1b}
h1{margin-bottom:0}section{border-top:1px solid #ddd;padding:.75rem 0}
h2{font-size:1.05rem;margin:.25rem 0}code{font:13px ui-monospace,monospace}
.m{display:inline-block;min-width:4.2rem;font:bold 12px ui-monospace,monospace;padding:2px 6px;border-radius:4px;color:#fff;text-align:center;margin-right:.5rem}
.get{background:#2f6f9f}.post{background:#2e7d32}.put{background:#8a5a00}.patch{background:#6a4c93}.delete{background:#b3261e}
table{border-collapse:collapse;margin:.25rem 0 .5rem}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}.muted{color:#666}
</style>
</head>
<body>
<h1>${escapeHtml(title)} <span class="muted">${escapeHtml(text(info.version))}</span></h1>
<p>${escapeHtml(text(info.description))}</p>
<p>Send <code>Authorization: Bearer &lt;key&gt;</code> on every <code>/v1</code> route. Errors are
<code>{ "error": { "code", "message", "details"? } }</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
${sections.join("\n")}
</body>
</html>
`;
}

function renderOperation(method: string, path: string, operation: Json, components: Json): string {
  const parts = [
    `<section><h2><span class="m ${method}">${method.toUpperCase()}</span><code>${escapeHtml(path)}</code></h2>`,
  ];
  if (operation.summary)
    parts.push(`<p><strong>${escapeHtml(text(operation.summary))}</strong></p>`);
  if (operation.description) parts.push(`<p>${escapeHtml(text(operation.description))}</p>`);

  const parameters = (operation.parameters ?? []) as Json[];
  if (parameters.length > 0) {
    const rows = parameters.map((parameter) => {
      const schema = (parameter.schema ?? {}) as Json;
      return row([
        `<code>${escapeHtml(text(parameter.name))}</code>`,
        escapeHtml(text(parameter.in)),
        parameter.required ? "yes" : "no",
        escapeHtml(typeOf(schema, components)),
        escapeHtml(text(parameter.description ?? schema.description)),
      ]);
    });
    parts.push(table(["Parameter", "In", "Required", "Type", "Description"], rows));
  }

  const body = operation.requestBody as Json | undefined;
  if (body) {
    const content = (body.content ?? {}) as Record<string, Json>;
    for (const [mediaType, media] of Object.entries(content)) {
      const schema = resolve((media.schema ?? {}) as Json, components);
      parts.push(
        `<p>Body (<code>${escapeHtml(mediaType)}</code>${body.required ? ", required" : ""}):</p>`,
      );
      parts.push(renderProperties(schema, components));
    }
  }

  const responses = (operation.responses ?? {}) as Record<string, Json>;
  const statuses = Object.entries(responses).map(
    ([status, response]) =>
      `<code>${escapeHtml(status)}</code> ${escapeHtml(text(response.description))}`,
  );
  if (statuses.length > 0) parts.push(`<p>Responses: ${statuses.join(" · ")}</p>`);
  parts.push("</section>");
  return parts.join("\n");
}

function renderProperties(schema: Json, components: Json): string {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return `<p><code>${escapeHtml(typeOf(schema, components))}</code></p>`;
  const required = new Set((schema.required ?? []) as string[]);
  const rows = Object.entries(properties).map(([name, property]) =>
    row([
      `<code>${escapeHtml(name)}</code>`,
      escapeHtml(typeOf(property, components)),
      required.has(name) ? "yes" : "no",
      escapeHtml(text(property.description)),
    ]),
  );
  return table(["Field", "Type", "Required", "Description"], rows);
}

/** A one-line type: `string`, `"a" | "b"`, `Tool[]`, `object`. */
function typeOf(schema: Json, components: Json, depth = 0): string {
  if (typeof schema.$ref === "string") return schema.$ref.split("/").pop() ?? "object";
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (Array.isArray(union) && depth < 3) {
    return union.map((s) => typeOf(s, components, depth + 1)).join(" | ");
  }
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : text(schema.type);
  if (type === "array" && schema.items && depth < 3) {
    return `${typeOf(schema.items as Json, components, depth + 1)}[]`;
  }
  return type || "any";
}

function resolve(schema: Json, components: Json): Json {
  if (typeof schema.$ref !== "string") return schema;
  const name = schema.$ref.split("/").pop() ?? "";
  return (components[name] as Json | undefined) ?? schema;
}

function table(headers: string[], rows: string[]): string {
  return `<table><tr>${headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr>\n${rows.join("\n")}</table>`;
}

function row(cells: string[]): string {
  return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join("")}</tr>`;
}

function text(value: unknown): string {
  return typeof value === "string" || typeof value === "number" ? String(value) : "";
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
