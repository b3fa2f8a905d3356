import { callerMessage, ToolbusError, ValidationError, zodIssues } from "@toolbus/core/errors";
import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ZodError } from "zod";
import type { HttpEnv } from "../common/env";
import { logFailure } from "../common/errors";

interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

interface Described {
  status: ContentfulStatusCode;
  body: ErrorBody;
  headers?: Record<string, string>;
}

const TARGETS: Record<string, string> = {
  json: "The request body",
  param: "The path",
  query: "The query string",
  header: "The request headers",
};

/**
 * The validation hook every route shares: a request that fails its zod schemas never reaches
 * the handler, and the caller learns every failing path at once.
 */
export function validationHook(
  result: { target: string } & ({ success: true } | { success: false; error: ZodError }),
): void {
  if (result.success) return;
  const what = TARGETS[result.target] ?? "The request";
  throw new ValidationError(`${what} is not valid.`, {
    details: zodIssues(result.error.issues, "(body)"),
  });
}

/**
 * The one place errors become responses. Only ToolbusErrors (messages written for callers)
 * and a fixed set of HTTP failures show their own words; anything else is a generic 500, so
 * no stack, class name or upstream message ever leaves the process.
 */
export function errorHandler(): ErrorHandler<HttpEnv> {
  return (error, c) => {
    const described = describe(error);
    if (described.status >= 500) logFailure(c, error);
    for (const [name, value] of Object.entries(described.headers ?? {})) c.header(name, value);
    // The key check's own challenge, naming the protected-resource metadata (common/auth.ts).
    const challenge = c.get("authChallenge");
    if (challenge && (described.status === 401 || described.status === 403)) {
      c.header("WWW-Authenticate", challenge);
    }
    return c.json(described.body, described.status);
  };
}

export function notFoundHandler(): NotFoundHandler<HttpEnv> {
  return (c) =>
    c.json(
      { error: { code: "not_found", message: `No route for ${c.req.method} ${c.req.path}.` } },
      404,
    );
}

function describe(error: unknown): Described {
  if (error instanceof ToolbusError) return describeToolbusError(error);
  if (error instanceof ZodError) {
    return body(
      400,
      "invalid_request",
      "The request is not valid.",
      zodIssues(error.issues, "(body)"),
    );
  }
  if (error instanceof HTTPException) return describeHttpException(error);
  return body(500, "internal", "Something went wrong on our side; retry later.");
}

function describeToolbusError(error: ToolbusError): Described {
  if (error.status === 503) {
    return { ...body(503, error.code, callerMessage(error)), headers: { "Retry-After": "1" } };
  }
  if (error.status >= 500)
    return body(500, "internal", "Something went wrong on our side; retry later.");
  const described = body(
    error.status as ContentfulStatusCode,
    error.code,
    error.message,
    error.details,
  );
  if (error.status === 401) described.headers = { "WWW-Authenticate": "Bearer" };
  return described;
}

const HTTP_FAILURES: Partial<Record<number, [code: string, message: string]>> = {
  400: ["invalid_request", "The request is not valid."],
  401: ["unauthorized", "An API key is required: Authorization: Bearer <key>."],
  403: ["forbidden", "This key may not do that."],
  404: ["not_found", "Not found."],
  405: ["method_not_allowed", "That method is not allowed here."],
  413: ["payload_too_large", "The request body is larger than 256 KB."],
  415: [
    "unsupported_media_type",
    "The request body must be JSON (Content-Type: application/json).",
  ],
  429: ["rate_limited", "Too many requests; retry later."],
};

function describeHttpException(error: HTTPException): Described {
  // hono's JSON validator reports a body it cannot parse this way.
  if (error.status === 400 && /malformed json/i.test(error.message)) {
    return body(400, "invalid_json", "The request body is not valid JSON.");
  }
  const known = HTTP_FAILURES[error.status];
  if (known) {
    const described = body(error.status as ContentfulStatusCode, known[0], known[1]);
    if (error.status === 401) described.headers = { "WWW-Authenticate": "Bearer" };
    return described;
  }
  if (error.status < 500) {
    return body(
      error.status as ContentfulStatusCode,
      "invalid_request",
      "The request is not valid.",
    );
  }
  return body(500, "internal", "Something went wrong on our side; retry later.");
}

function body(
  status: ContentfulStatusCode,
  code: string,
  message: string,
  details?: unknown,
): Described {
  return {
    status,
    body: { error: { code, message, ...(details === undefined ? {} : { details }) } },
  };
}
