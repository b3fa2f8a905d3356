/** Small helpers for reading pattern JSON that may arrive already parsed (and so not be JSON). */

export type JsonObject = { [key: string]: unknown };

/** A plain object as JSON.parse makes it; Dates, Maps and class instances are not patterns. */
export function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

const MAX_DESCRIBED_LENGTH = 40;

/** A short rendering of an offending value for error messages; never throws. */
export function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint") return `${value}n`;
  if (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    !isPlainObject(value)
  ) {
    return `a ${value.constructor?.name ?? "non-plain"} object`;
  }
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // Cycles and BigInts inside arrays: the type is enough to point at the problem.
    return Array.isArray(value) ? "an array" : "an object";
  }
  return text.length > MAX_DESCRIBED_LENGTH
    ? `${text.slice(0, MAX_DESCRIBED_LENGTH - 3)}...`
    : text;
}

/** JSON-ish type name, for "must be a string, got a number" style messages. */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "boolean":
      return "a boolean";
    case "object":
      return isPlainObject(value) ? "an object" : describe(value);
    default:
      return describe(value);
  }
}
