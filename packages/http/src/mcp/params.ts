import {
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  Server,
  type ServerContext,
  specTypeSchemas,
} from "@modelcontextprotocol/server";

/** At most this many problems are named in one message; the rest are counted. */
const MAX_NAMED_ISSUES = 5;

/** The spec's request type of each method whose params are checked before its handler runs. */
const SPEC_REQUEST = {
  initialize: "InitializeRequest",
  "tools/list": "ListToolsRequest",
  "tools/call": "CallToolRequest",
  "resources/read": "ReadResourceRequest",
} as const;

type Handler = (request: JSONRPCRequest, context: ServerContext) => Promise<Result>;

/**
 * The SDK's Server, except for requests whose params do not fit the method's schema: the SDK
 * answers those with -32603 (internal error) or a raw dump of the schema's complaint, as if
 * the fault were ours. Here they answer -32602 (invalid params) with each failing path named
 * in words, on both protocol generations.
 */
export class ReadableParamsServer extends Server {
  // Called from Server's constructor too (for initialize): module constants only, no fields.
  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const inner = super._wrapHandler(method, handler);
    const name = SPEC_REQUEST[method as keyof typeof SPEC_REQUEST];
    if (!name) return inner;
    return async (request, context) => {
      const checked = await specTypeSchemas[name]["~standard"].validate(request);
      if (checked.issues) throw invalidParams(method, checked.issues);
      return inner(request, context);
    };
  }
}

interface Issue {
  message: string;
  path?: readonly (PropertyKey | { key: PropertyKey })[] | undefined;
}

function invalidParams(method: string, issues: readonly Issue[]): ProtocolError {
  const named = issues.slice(0, MAX_NAMED_ISSUES).map((issue) => {
    const path =
      (issue.path ?? [])
        .map((part) => String(typeof part === "object" ? part.key : part))
        .join(".") || "(request)";
    return `${path}: ${issue.message}`;
  });
  const more = issues.length - named.length;
  const list = named.join("; ") + (more > 0 ? `; and ${more} more` : "");
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Invalid params for ${method}${list ? `: ${list}` : ""}.`,
  );
}
