import * as z from "zod";
import { providerName } from "./ids";

/**
 * Secrets are read from the environment by name, where a Lambda function also holds its own
 * credentials (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and Toolbus its admin key: a
 * registration must never be able to send those to an upstream of its choosing.
 */
const RESERVED_SECRET_PREFIXES = ["AWS_", "LAMBDA_", "SST_", "TOOLBUS_"];

/**
 * Secrets are referenced by name (the environment variable locally, the SST secret on AWS);
 * the catalog never holds a value. Stored tools are parsed with this too, so the registered
 * prefix (./registered-secret) is not part of it: a registration stored before that rule must
 * still load (and is reported unavailable); the rule is checked where registrations are
 * written (app/catalog/checks.ts).
 *
 * Remove that leniency after 2027-03-31 (check the prefix here, drop forbiddenSecret in
 * registered/secrets.ts and the separate check in app/catalog/checks.ts). The rule came on
 * 2026-11-26 with the first working AWS deploy, so only a local table kept on disk can hold a
 * registration stored before it; catalog items have no TTL, so such a registration has to be
 * registered again or removed, and the release notes must say so.
 */
export const secretName = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]{0,40}$/, "an upper-case name: A-Z, 0-9 and _, 1-41 chars (ACME_TOKEN)")
  .refine((name) => !RESERVED_SECRET_PREFIXES.some((prefix) => name.startsWith(prefix)), {
    message: "names starting with AWS_, LAMBDA_, SST_ or TOOLBUS_ are the platform's own",
  });

/** The capability a referenced secret stands for: `ACME_TOKEN` -> `secret_acme_token`. */
export const secretCapabilityName = (secret: string) => `secret_${secret.toLowerCase()}`;

// Headers the HTTP client or the connection owns: a registration may not set them.
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "accept-encoding",
  "te",
  "upgrade",
  "mcp-session-id",
  "mcp-protocol-version",
]);

const headerName = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,64}$/, "a header name: letters, digits and -")
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), {
    message: "this header is set by Toolbus itself",
  });

/** Written before the value, e.g. "Bearer ". */
const headerPrefix = z
  .string()
  .max(32)
  .regex(/^[\x20-\x7e]*$/, "printable ASCII only")
  .default("");

/** A request header whose value is read from a named secret of the stage at call time. */
export const stageSecretHeader = z
  .object({ header: headerName, secret: secretName, prefix: headerPrefix })
  .strict();
export type StageSecretHeader = z.infer<typeof stageSecretHeader>;

/**
 * A request header carrying each caller's own access token, from their connection at
 * `provider` (one of the stage's `connections.providers`): the tools act as their caller.
 */
export const connectionHeader = z
  .object({
    header: headerName,
    prefix: headerPrefix,
    provider: providerName,
    /** What the caller's connection must grant; absent: the provider's default scopes. */
    scopes: z
      .array(
        z
          .string()
          .max(200)
          .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "one scope: no spaces or quotes"),
      )
      .max(50)
      .optional(),
  })
  .strict();
export type ConnectionHeader = z.infer<typeof connectionHeader>;

/**
 * The auth header of a registration: the stage's secret (`secret`), the same for every caller,
 * or each caller's own token (`provider`). Never both.
 */
export const secretHeader = z.union([stageSecretHeader, connectionHeader], {
  error: (issue) => {
    const input = issue.input;
    if (issue.code !== "invalid_union" || !input || typeof input !== "object") return undefined;
    const names = (key: string) => key in input;
    if (names("secret") && names("provider")) {
      return "names both a secret and a provider: give secret to send the stage's secret, or provider to send each caller's own token from their connection, not both";
    }
    if (!names("secret") && !names("provider")) {
      return "names neither a secret (the stage's, sent for every caller) nor a provider (each caller's own token from their connection)";
    }
    return undefined;
  },
});
export type SecretHeader = z.infer<typeof secretHeader>;

/** Whether an auth header sends each caller's own token rather than a stage secret. */
export const isConnectionHeader = (auth: SecretHeader): auth is ConnectionHeader =>
  "provider" in auth;

/** The stage secret an auth header reads, if it reads one. */
export const secretOfAuth = (auth: SecretHeader | undefined): string | undefined =>
  auth && !isConnectionHeader(auth) ? auth.secret : undefined;

export const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** A registered HTTPS endpoint: the URL template is filled from the input at call time. */
const httpImplementation = z
  .object({
    kind: z.literal("http"),
    method: z.enum(HTTP_METHODS),
    url: z.string().min(1).max(2048),
    auth: secretHeader.optional(),
  })
  .strict();
export type HttpImplementation = z.infer<typeof httpImplementation>;

/** The MCP generations Toolbus speaks to a registered server, oldest first. */
export const MCP_PROTOCOLS = ["2025-11-25", "2026-07-28"] as const;
export const mcpProtocol = z.enum(MCP_PROTOCOLS);
export type McpProtocol = z.infer<typeof mcpProtocol>;

/** A tool of a remote MCP server (Streamable HTTP), called by its name on that server. */
const mcpImplementation = z
  .object({
    kind: z.literal("mcp"),
    url: z.string().min(1).max(2048),
    auth: secretHeader.optional(),
    remoteName: z.string().min(1).max(128),
    /**
     * The generations the server speaks, as discovery at registration found them ("2026-07-28"
     * answered `server/discover`, "2025-11-25" answered `initialize`). Absent on a registration
     * stored before discovery recorded it: ["2025-11-25"].
     */
    protocols: z.array(mcpProtocol).min(1).optional(),
    /**
     * The server declares the tool runs only as a task (2025-11-25 `execution.taskSupport`):
     * Toolbus then calls it as one and polls it, and its caller gets the result as from any
     * tool.
     */
    remoteTaskRequired: z.boolean().optional(),
  })
  .strict();

export const implementation = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("builtin") }),
  httpImplementation,
  mcpImplementation,
]);
type Implementation = z.infer<typeof implementation>;
export type RegisteredKind = Exclude<Implementation["kind"], "builtin">;
