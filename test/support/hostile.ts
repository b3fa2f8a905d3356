import { expect } from "vitest";

/** Words that only appear in a response when an internal error or stack leaked out. */
const STACK_MARKERS = [
  /\n\s+at \S/,
  /\bat .*\.[cm]?[jt]sx?:\d+:\d+/,
  /\bat (?:async )?[\w$.<>]+ \(/,
];
const ERROR_MARKERS = [
  /\bError:/,
  /TypeError/,
  /RangeError/,
  /SyntaxError/,
  /ZodError/,
  /node_modules/,
  /ConditionalCheckFailed/,
  /ResourceNotFoundException/,
];

/**
 * The response checks every hostile request shares: never a 5xx, never a server banner, and a
 * 4xx is the API's JSON error shape with nothing internal in it. `input` is the text the
 * caller sent (path or body): a marker the caller wrote itself and the API echoed is not a leak.
 */
export async function expectSafeResponse(
  response: Response,
  options: { input?: string; jsonRpc?: boolean } = {},
): Promise<{ status: number; text: string }> {
  const text = await response.text();
  const status = response.status;
  if (status >= 500) {
    throw new Error(
      `got ${status} for input ${JSON.stringify(options.input)?.slice(0, 300)}: ${text}`,
    );
  }
  expect(response.headers.get("server")).toBeNull();
  expect(response.headers.get("x-powered-by")).toBeNull();
  const markers = status >= 400 ? [...STACK_MARKERS, ...ERROR_MARKERS] : STACK_MARKERS;
  for (const marker of markers) {
    if (options.input !== undefined && marker.test(options.input)) continue;
    if (marker.test(text)) {
      throw new Error(`response leaks ${marker}: ${text.slice(0, 500)}`);
    }
  }
  if (status >= 400) {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    expect(body.error, text).toBeTypeOf("object");
    if (!options.jsonRpc) expect(body.error?.code, text).toBeTypeOf("string");
    expect(body.error?.message, text).toBeTypeOf("string");
  }
  return { status, text };
}

/** Path-segment strings a hostile caller might try, beside the generated ones. */
export const NASTY_SEGMENTS = [
  "%",
  "%E0%A4%A",
  "%00",
  "%2F..%2F..",
  "..",
  ".",
  "%F0%9F%98%80",
  "__proto__",
  "constructor",
  "a".repeat(10_000),
  "%ZZ",
  "' OR 1=1 --",
  "$%7Bjndi:ldap://x%7D",
];
