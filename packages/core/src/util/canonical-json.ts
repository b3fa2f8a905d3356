import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level, so equal values always serialize the same:
 * input hashes and cache keys must not depend on the order a client wrote its fields in.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** A call's `inputHash`: equal inputs, whatever their fields' order, hash alike. */
export const inputHashOf = (input: unknown): string => sha256Hex(canonicalJson(input));
