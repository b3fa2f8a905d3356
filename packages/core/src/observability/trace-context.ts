import { randomBytes } from "node:crypto";
import type { HttpClient } from "../outbound/types";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): `traceparent` is
 * `version-traceId-parentId-flags`, lowercase hex. A call keeps the trace its caller started
 * (or one started here), so its events, its record and its upstream requests can be found by
 * trace id in any tracing backend.
 */
export interface TraceContext {
  /** 32 hex digits, not all zero: the whole trace. */
  traceId: string;
  /** 16 hex digits, not all zero: the span that made this request. */
  parentId: string;
  /** Bit 0: the caller sampled this trace. */
  sampled: boolean;
}

// Fixed-width fields, no repetition: linear in the input and never more than 55 characters
// read (longer input is a future version's, whose first four fields are the same).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_PARENT = "0".repeat(16);

/** The trace a `traceparent` header names, or undefined when it is absent or malformed. */
export function parseTraceparent(header: string | undefined | null): TraceContext | undefined {
  if (!header || header.length > 512) return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, parentId, flags, rest] = match;
  if (!version || !traceId || !parentId || !flags) return undefined;
  // Version ff is invalid; version 00 has exactly four fields.
  if (version === "ff" || (version === "00" && rest === "-")) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_PARENT) return undefined;
  return { traceId, parentId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

/** A new trace, for a request that came without one. */
export function newTrace(): TraceContext {
  return { traceId: randomHex(16, ZERO_TRACE), parentId: newSpanId(), sampled: false };
}

/** A new span id: what this process sends upstream as the parent of the next hop. */
export function newSpanId(): string {
  return randomHex(8, ZERO_PARENT);
}

/** The header for the next hop: the same trace, `spanId` as its parent. */
export function formatTraceparent(trace: TraceContext, spanId = trace.parentId): string {
  return `00-${trace.traceId}-${spanId}-${trace.sampled ? "01" : "00"}`;
}

/**
 * The outbound client of one call: every request carries the call's trace, as a new span of
 * it, so the upstream's own traces join the caller's.
 */
export function withTraceparent(http: HttpClient, trace: TraceContext): HttpClient {
  const traced = <R extends { headers?: Record<string, string> | undefined }>(request: R): R => ({
    ...request,
    headers: { ...request.headers, traceparent: formatTraceparent(trace, newSpanId()) },
  });
  const { open } = http;
  return {
    request: (url, request = {}) => http.request(url, traced(request)),
    // Streams too: a client that can stream stays one that can.
    ...(open ? { open: (url, request = {}) => open.call(http, url, traced(request)) } : {}),
  };
}

function randomHex(bytes: number, zero: string): string {
  for (;;) {
    const hex = randomBytes(bytes).toString("hex");
    if (hex !== zero) return hex;
  }
}
