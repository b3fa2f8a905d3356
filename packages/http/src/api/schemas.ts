import { z } from "@hono/zod-openapi";
import { callId, runId, toolId, toolsetName } from "@toolbus/wire/model/ids";
import { errorBody } from "@toolbus/wire/schemas";

// Route metadata on top of the wire contract: path parameters with their examples, headers,
// error responses and security. Bodies, queries and views are @toolbus/wire/schemas', which
// the typed client parses answers with too, so /openapi.json, the handlers and the client
// cannot drift apart.

// The wire's schemas are created before @hono/zod-openapi patches zod, so they have no
// `.openapi()`; zod's own `.meta()` carries the same metadata (`id` names a component).
export const runIdParam = runId.meta({ example: "run-42" });
export const callIdParam = callId.meta({ example: "call-1" });
export const toolIdParam = toolId.meta({ example: "readability_analyzer" });
export const toolsetNameParam = toolsetName.meta({ example: "text" });
/** Ids the key store issues or accepts. */
export const keyIdParam = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "1-64 letters, digits, . _ or -")
  .openapi({ example: "0123456789abcdef" });

export const ifMatchHeaders = z.object({
  "if-match": z.string().max(64).optional().openapi({
    description: 'The revision you read (ETag), e.g. "3": the write fails with 409 if it moved on.',
  }),
});

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid request (details list each failing path)",
  401: "Missing, unknown or revoked API key",
  403: "The key's role is too low",
  404: "Not found",
  409: "Conflict",
  413: "Body over 256 KB",
  415: "Body is not JSON",
  503: "A dependency is unavailable; retry later",
};

/** The error responses a route can give, all in the one error shape. */
export function errorResponses<S extends number>(...statuses: S[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: ERROR_DESCRIPTIONS[status] ?? "Error",
        content: { "application/json": { schema: errorBody } },
      },
    ]),
  ) as Record<
    S,
    { description: string; content: { "application/json": { schema: typeof errorBody } } }
  >;
}

export const bearerSecurity = [{ bearerAuth: [] }];

export function jsonContent<T>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}
