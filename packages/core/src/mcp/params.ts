import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type AnyObjectSchema,
  getLiteralValue,
  getObjectShape,
  type SchemaOutput,
  safeParse,
} from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";

/** At most this many problems are named in one message; the rest are counted. */
const MAX_NAMED_ISSUES = 5;

/**
 * The SDK's Server, except for requests whose params do not fit the method's schema: the SDK
 * answers those with -32603 (internal error) and zod's raw dump, as if the fault were ours.
 * Here every method (initialize, tools/list, tools/call, …) answers -32602 (invalid params)
 * with each failing path named in words.
 */
export class ReadableParamsServer extends Server {
  override setRequestHandler<T extends AnyObjectSchema>(
    requestSchema: T,
    handler: Parameters<Server["setRequestHandler"]>[1] extends infer H
      ? H extends (request: never, ...rest: infer R) => infer Out
        ? (request: SchemaOutput<T>, ...rest: R) => Out
        : never
      : never,
  ): void {
    const method = getLiteralValue(getObjectShape(requestSchema)?.method ?? z.never());
    if (typeof method !== "string") throw new Error("A request schema names its method.");
    // The SDK parses with the schema it is given before anything else runs, so the check
    // rides on that parse: a refinement that throws stops it with our error instead.
    const gate = z.looseObject({ method: z.literal(method) }).superRefine((request) => {
      const parsed = safeParse(requestSchema, request);
      if (!parsed.success) throw invalidParams(method, parsed.error);
    });
    super.setRequestHandler(gate, (request, extra) => {
      const parsed = safeParse(requestSchema, request);
      if (!parsed.success) throw invalidParams(method, parsed.error);
      return handler(parsed.data as SchemaOutput<T>, extra);
    });
  }
}

function invalidParams(method: string, error: unknown): McpError {
  const issues = (error as { issues?: { path?: PropertyKey[]; message?: string }[] }).issues ?? [];
  const named = issues.slice(0, MAX_NAMED_ISSUES).map((issue) => {
    const path = (issue.path ?? []).map(String).join(".") || "(request)";
    return `${path}: ${issue.message ?? "not valid"}`;
  });
  const more = issues.length - named.length;
  const list = named.join("; ") + (more > 0 ? `; and ${more} more` : "");
  return new McpError(
    ErrorCode.InvalidParams,
    `Invalid params for ${method}${list ? `: ${list}` : ""}.`,
  );
}
