/**
 * URL templates of registered HTTP tools: `https://api.example.com/v1/items/{id}?q={query}`.
 * Placeholders may stand in the path and as whole query values, never in the scheme, host or
 * port, so an input can choose what to ask an upstream but never which upstream to ask.
 */
export interface UrlTemplate {
  /** Placeholders in the path: required, and one path segment each once encoded. */
  path: string[];
  /** Query parameter -> placeholder; a parameter whose field is absent is left out. */
  query: Map<string, string>;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;

/** Parses and checks a template; throws an Error whose message says what is wrong. */
export function parseUrlTemplate(template: string): UrlTemplate {
  const fragment = template.indexOf("#");
  if (fragment !== -1) throw new Error("The URL may not have a #fragment.");
  const queryStart = template.indexOf("?");
  const head = queryStart === -1 ? template : template.slice(0, queryStart);
  const queryPart = queryStart === -1 ? "" : template.slice(queryStart + 1);
  const origin = /^https?:\/\/[^/]*/i.exec(head)?.[0];
  if (!origin) throw new Error("The URL must be absolute: http(s)://host/path.");
  if (origin.includes("{")) throw new Error("Placeholders may not stand in the scheme or host.");
  if (origin.includes("@")) throw new Error("The URL may not carry credentials.");
  const pathPart = head.slice(origin.length);
  const path = [...pathPart.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
  const leftover = pathPart.replace(PLACEHOLDER, "");
  if (/[{}]/.test(leftover)) throw new Error("The path has a malformed {placeholder}.");

  const query = new Map<string, string>();
  for (const pair of queryPart ? queryPart.split("&") : []) {
    const [name = "", value = ""] = pair.split("=", 2);
    const whole = /^\{([A-Za-z_][A-Za-z0-9_]{0,63})\}$/.exec(value);
    if (whole) {
      query.set(decodeURIComponent(name), whole[1] as string);
    } else if (/[{}]/.test(pair)) {
      throw new Error(`Query parameter ${name}: a placeholder must be the whole value.`);
    }
  }
  const all = [...path, ...query.values()];
  const repeated = all.find((name, index) => all.indexOf(name) !== index);
  if (repeated) throw new Error(`Placeholder {${repeated}} is used twice.`);
  // What remains once every placeholder is filled must be a URL.
  try {
    new URL(template.replace(PLACEHOLDER, "x"));
  } catch {
    throw new Error("It is not a valid URL.");
  }
  return { path, query };
}

/**
 * The request an input makes: the template filled in, and the fields it left over. Throws an
 * Error for a value that cannot stand where it is (an object in the path, a dot segment).
 */
export function expandUrlTemplate(
  template: string,
  input: Record<string, unknown>,
): { url: URL; rest: Record<string, unknown> } {
  const parsed = parseUrlTemplate(template);
  const used = new Set([...parsed.path, ...parsed.query.values()]);
  const queryStart = template.indexOf("?");
  const head = queryStart === -1 ? template : template.slice(0, queryStart);
  const filled = head.replace(PLACEHOLDER, (_, name: string) => {
    const value = scalar(input[name], name);
    if (value === undefined || value === "") throw new Error(`${name} is required in the path.`);
    // The URL parser resolves . and .. (and %2e) segments: they would walk up the path.
    if (/^(\.|%2e){1,2}$/i.test(value)) throw new Error(`${name} may not be . or ..`);
    return encodeURIComponent(value);
  });
  const url = new URL(filled);
  for (const pair of queryStart === -1 ? [] : template.slice(queryStart + 1).split("&")) {
    if (pair === "") continue;
    const [rawName = "", rawValue = ""] = pair.split("=", 2);
    const name = decodeURIComponent(rawName);
    const field = parsed.query.get(name);
    if (field === undefined) {
      url.searchParams.append(name, decodeURIComponent(rawValue));
      continue;
    }
    for (const value of queryValues(input[field], field)) url.searchParams.append(name, value);
  }
  const rest = Object.fromEntries(Object.entries(input).filter(([key]) => !used.has(key)));
  return { url, rest };
}

/** Query values of a field: arrays repeat the parameter, absent fields send nothing. */
export function queryValues(value: unknown, name: string): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item) => queryValues(item, name));
  if (typeof value === "object") return [JSON.stringify(value)];
  return [scalar(value, name) as string];
}

function scalar(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new Error(`${name} must be a string, number or boolean to stand in the URL.`);
}
