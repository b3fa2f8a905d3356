import { randomUUID } from "node:crypto";
import type { PutEventsEntry } from "./schemas";

/** The event as EventBridge hands it to targets and to pattern matching. */
export interface EventEnvelope {
  version: "0";
  id: string;
  "detail-type": string;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Record<string, unknown>;
}

/** EventBridge's per-entry limit, counted the way its documentation says. */
export const MAX_ENTRY_BYTES = 256 * 1024;

export type EntryCheck =
  | { ok: true; detail: Record<string, unknown> }
  | { ok: false; code: string; message: string };

/** Validates one PutEvents entry; failures are per entry, never for the whole request. */
export function checkEntry(entry: PutEventsEntry): EntryCheck {
  for (const field of ["Source", "DetailType", "Detail"] as const) {
    if (entry[field] === undefined || entry[field] === "") {
      return {
        ok: false,
        code: "InvalidArgument",
        message: `Parameter(s) ${field} is not valid. Reason: ${field} is a required argument.`,
      };
    }
  }
  const size = entrySize(entry);
  if (size > MAX_ENTRY_BYTES) {
    return {
      ok: false,
      code: "InvalidArgument",
      message: `Entry size is ${size} bytes, over the limit of ${MAX_ENTRY_BYTES} bytes.`,
    };
  }
  if (entry.Source?.startsWith("aws.")) {
    return {
      ok: false,
      code: "NotAuthorizedForSourceException",
      message: "Not authorized for the source.",
    };
  }
  const detail = parseObject(entry.Detail ?? "");
  if (!detail) return { ok: false, code: "MalformedDetail", message: "Detail is malformed." };
  return { ok: true, detail };
}

function entrySize(entry: PutEventsEntry): number {
  let size = entry.Time !== undefined ? 14 : 0;
  size += Buffer.byteLength(entry.Source ?? "") + Buffer.byteLength(entry.DetailType ?? "");
  size += Buffer.byteLength(entry.Detail ?? "");
  for (const resource of entry.Resources ?? []) size += Buffer.byteLength(resource);
  return size;
}

export function buildEnvelope(
  entry: PutEventsEntry,
  detail: Record<string, unknown>,
  where: { account: string; region: string },
): EventEnvelope {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": entry.DetailType ?? "",
    source: entry.Source ?? "",
    account: where.account,
    time: eventTime(entry.Time),
    region: where.region,
    resources: entry.Resources ?? [],
    detail,
  };
}

/** EventBridge writes times to the second, without milliseconds. */
function eventTime(time: number | string | undefined): string {
  const date =
    typeof time === "number" ? new Date(time * 1000) : time ? new Date(time) : new Date();
  const valid = Number.isNaN(date.getTime()) ? new Date() : date;
  return `${valid.toISOString().slice(0, 19)}Z`;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
