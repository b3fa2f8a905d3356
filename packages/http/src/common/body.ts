import { PayloadTooLargeError, type ToolbusError, ValidationError } from "@toolbus/core/errors";
import type { Context, MiddlewareHandler } from "hono";
import type { HttpEnv } from "./env";

/** Largest request body accepted, checked before anything parses it. */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Deepest nesting of arrays and objects a JSON body may have. Far beyond what a tool input or
 * a schema needs, and far below the depth where JSON.stringify (hashing, storing, answering)
 * runs out of stack: a 10,000-deep body is a 400 here, never a 500 later.
 */
const MAX_JSON_DEPTH = 64;

/**
 * How much of a refused body is still read and thrown away so the connection can carry the
 * caller's next request. A body declared larger than this is not read at all: the answer
 * says `Connection: close` instead.
 */
const DRAIN_BYTES = 8 * 1024 * 1024;

const BODYLESS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Early answers (401 before the body is read, 413, 415) leave the rest of the body unread, and
 * the Node server then hangs up on a keep-alive connection while the client may still be
 * sending: its next request fails, and it may not even see the answer. Runs first and finishes
 * last: once the answer is made, what is left of the body is read and dropped (up to
 * DRAIN_BYTES); when that is too much or cannot be read, the answer says `Connection: close`.
 */
export function settleRequestBody(): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    await next();
    if (BODYLESS.has(c.req.method)) return;
    const declared = declaredLength(c.req.header("content-length"));
    if (declared !== undefined && declared > DRAIN_BYTES) return closeAfter(c);
    const body = c.req.raw.body;
    // Locked: a reader took it whole (the JSON validator, the MCP transport).
    if (body === null || body.locked) return;
    const drained = await drain(body.getReader(), DRAIN_BYTES);
    if (!drained) closeAfter(c);
  };
}

/**
 * Refuses a body over `maxBytes` with a 413, declared or streamed, reading no more of it than
 * that; and a JSON body nested deeper than MAX_JSON_DEPTH with a 400. What passes is handed
 * on buffered, so the route reads it as usual.
 */
export function limitRequestBody(
  options: {
    maxBytes?: number;
    /** How a refusal is answered; by default it is thrown, for the API's error handler. */
    refuse?: (c: Context<HttpEnv>, error: ToolbusError) => Response;
  } = {},
): MiddlewareHandler<HttpEnv> {
  const { maxBytes = MAX_BODY_BYTES } = options;
  const refuse =
    options.refuse ??
    ((_c: Context<HttpEnv>, error: ToolbusError): Response => {
      throw error;
    });
  return async (c, next) => {
    const body = c.req.raw.body;
    if (BODYLESS.has(c.req.method) || body === null) return next();
    const declared = declaredLength(c.req.header("content-length"));
    if (declared !== undefined && declared > maxBytes) return refuse(c, tooLarge(maxBytes));
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        // The rest is settleRequestBody's to drain.
        reader.releaseLock();
        return refuse(c, tooLarge(maxBytes));
      }
      chunks.push(value);
    }
    const bytes = Buffer.concat(chunks, size);
    if (isJson(c.req.header("content-type")) && jsonDepth(bytes) > MAX_JSON_DEPTH) {
      return refuse(
        c,
        new ValidationError(
          `The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`,
          { details: [{ path: "(body)", message: `at most ${MAX_JSON_DEPTH} levels of nesting` }] },
        ),
      );
    }
    c.req.raw = new Request(c.req.raw, { body: bytes });
    await next();
  };
}

/**
 * The deepest nesting of `[` and `{` in JSON text, strings skipped. Works on UTF-8 bytes: no
 * byte of a multi-byte character is ever an ASCII bracket, quote or backslash. Linear; text
 * that is not JSON gets a depth too, and the JSON parser has its say afterwards.
 */
export function jsonDepth(bytes: Uint8Array): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index];
    if (inString) {
      if (byte === 0x5c) index += 1;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      depth += 1;
      if (depth > deepest) deepest = depth;
    } else if (byte === 0x5d || byte === 0x7d) depth -= 1;
  }
  return deepest;
}

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType);
}

function declaredLength(header: string | undefined): number | undefined {
  if (header === undefined || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header);
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(
    `The request body is larger than ${Math.round(maxBytes / 1024)} KB.`,
  );
}

/** Reads and drops up to `limit` bytes; true when the body ended within them. */
async function drain(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limit: number,
): Promise<boolean> {
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      read += value.byteLength;
      if (read > limit) return false;
    }
  } catch {
    // The client went away mid-body: nothing left to keep the connection for.
    return false;
  } finally {
    reader.releaseLock();
  }
}

function closeAfter(c: { header(name: string, value: string): void; res: Response }): void {
  c.res.headers.set("Connection", "close");
}
