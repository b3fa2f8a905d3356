import { providerName } from "@toolbus/wire/model/ids";
import { secretName } from "@toolbus/wire/model/implementation";
import * as z from "zod";
import type { Issue } from "../errors";
import { scopeToken, secureUrl } from "../oauth-config";

/**
 * One OAuth 2.0 provider Toolbus connects people's accounts at. The client secret is a secret's
 * name, never a value. For the built-in providers (github, google) every endpoint has a
 * default; any other provider names its own.
 */
const providerConfig = z.strictObject({
  clientId: z.string().min(1).max(512),
  /** The secret holding the client secret (`GITHUB_OAUTH_SECRET`); absent for a public client. */
  clientSecret: secretName.optional(),
  /** How the client authenticates at the token endpoint (default: HTTP Basic). */
  clientAuth: z.enum(["basic", "post"]).optional(),
  authorizeUrl: secureUrl.optional(),
  tokenUrl: secureUrl.optional(),
  /** RFC 7009 revocation endpoint; without one a disconnect only forgets the tokens. */
  revokeUrl: secureUrl.optional(),
  /**
   * The provider's issuer identifier: when set, an authorization response that carries `iss`
   * (RFC 9207) must carry this one. Without it `iss` is not checked: each provider has its own
   * redirect URI, the other defence RFC 9207 names against mixing providers up.
   */
  issuer: secureUrl.optional(),
  /** Scopes asked for when a tool names none. */
  scopes: z.array(scopeToken).max(50).optional(),
});
export type ProviderConfig = z.infer<typeof providerConfig>;

/** `connections` in the stage configuration: where people connect their own accounts. */
export const connectionsConfig = z.strictObject({
  /**
   * The stage's public base URL (`https://toolbus.example.com`): connect links and the
   * providers' redirect URI (`<publicUrl>/connect/<provider>/callback`) are built on it.
   */
  publicUrl: secureUrl.refine((url) => !url.endsWith("/"), { message: "no trailing slash" }),
  providers: z.record(providerName, providerConfig).default({}),
  /** Built-in tool id → whose account it acts with: the stage's secret, or each caller's own. */
  credentials: z.record(z.string().min(1).max(48), z.enum(["stage", "user"])).default({}),
});
export type ConnectionsConfig = z.infer<typeof connectionsConfig>;

/** Endpoints and default scopes of the providers Toolbus knows by name. */
export const BUILT_IN_PROVIDERS: Record<
  string,
  Required<Pick<ProviderConfig, "authorizeUrl" | "tokenUrl">> &
    Pick<ProviderConfig, "revokeUrl" | "issuer" | "scopes" | "clientAuth">
> = {
  github: {
    authorizeUrl: "https://github.com/login/oauth/authorize",
    tokenUrl: "https://github.com/login/oauth/access_token",
    clientAuth: "post",
  },
  google: {
    authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    tokenUrl: "https://oauth2.googleapis.com/token",
    revokeUrl: "https://oauth2.googleapis.com/revoke",
    issuer: "https://accounts.google.com",
    clientAuth: "post",
  },
};

/** A provider with every endpoint known: its config over the built-in defaults. */
export interface Provider {
  name: string;
  clientId: string;
  clientSecret?: string;
  clientAuth: "basic" | "post";
  authorizeUrl: string;
  tokenUrl: string;
  revokeUrl?: string;
  issuer?: string;
  scopes: string[];
}

/** The provider `name` as the stage configures it, or undefined when it does not. */
export function providerOf(
  config: ConnectionsConfig | undefined,
  name: string,
): Provider | undefined {
  const own = config?.providers[name];
  if (!own) return undefined;
  const builtIn = BUILT_IN_PROVIDERS[name];
  const authorizeUrl = own.authorizeUrl ?? builtIn?.authorizeUrl;
  const tokenUrl = own.tokenUrl ?? builtIn?.tokenUrl;
  if (!authorizeUrl || !tokenUrl) return undefined;
  const revokeUrl = own.revokeUrl ?? builtIn?.revokeUrl;
  const issuer = own.issuer ?? builtIn?.issuer;
  const clientSecret = own.clientSecret;
  return {
    name,
    clientId: own.clientId,
    ...(clientSecret ? { clientSecret } : {}),
    clientAuth: own.clientAuth ?? builtIn?.clientAuth ?? "basic",
    authorizeUrl,
    tokenUrl,
    ...(revokeUrl ? { revokeUrl } : {}),
    ...(issuer ? { issuer } : {}),
    scopes: own.scopes ?? builtIn?.scopes ?? [],
  };
}

/** A provider other than github and google must name its endpoints: checked at start. */
export function connectionsConfigProblems(config: ConnectionsConfig | undefined): Issue[] {
  if (!config) return [];
  const problems: Issue[] = [];
  for (const [name, provider] of Object.entries(config.providers)) {
    if (BUILT_IN_PROVIDERS[name]) continue;
    for (const field of ["authorizeUrl", "tokenUrl"] as const) {
      if (!provider[field]) {
        problems.push({
          path: `connections.providers.${name}.${field}`,
          message: `required: ${name} is not a provider Toolbus knows (github, google)`,
        });
      }
    }
  }
  return problems;
}

/** Where a person opens a connection, and where the provider sends them back. */
export const connectUrl = (config: ConnectionsConfig, provider: string, ticket?: string) =>
  `${config.publicUrl}/connect/${provider}${ticket ? `?ticket=${encodeURIComponent(ticket)}` : ""}`;
export const callbackUrl = (config: ConnectionsConfig, provider: string) =>
  `${config.publicUrl}/connect/${provider}/callback`;
