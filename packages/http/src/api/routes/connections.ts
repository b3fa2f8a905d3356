import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { mayActForOthers } from "@toolbus/core/app/access";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { providerOf } from "@toolbus/core/connections/config";
import { ForbiddenError, NotFoundError, ValidationError } from "@toolbus/core/errors";
import { PROVIDER_NAME } from "@toolbus/wire/model/ids";
import {
  connectBody,
  connectionListView,
  connectionProviderName,
  connectionProvidersView,
  connectionsQuery,
  connectLinkView,
  disconnectedView,
  disconnectQuery,
} from "@toolbus/wire/schemas";
import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { authenticate, requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

/** The cookie binding a connect attempt to the browser that started it. */
const COOKIE = "toolbus_connect";
/** As long as a pending connection lives (the service's state expires then too). */
const COOKIE_MAX_AGE = 600;
/** What the connect pages allow: nothing at all to load or run. */
const PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** Query values a browser brings back, each bounded (a provider's code or state is far shorter). */
const connectQuery = z.object({
  ticket: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,128}$/)
    .optional(),
});
const callbackQuery = z.object({
  code: z.string().min(1).max(2048).optional(),
  state: z.string().min(1).max(1024).optional(),
  iss: z.string().min(1).max(2048).optional(),
  error: z.string().min(1).max(256).optional(),
});

const providerParams = z.object({ provider: connectionProviderName });

/**
 * People's connected accounts: `/v1/connections` (their own, an admin's anyone's) and the
 * browser's side of connecting one, `/connect/{provider}` and its callback, outside /v1 (no
 * JSON, no Authorization header needed with a ticket). Thin: every rule is ConnectionService's.
 */
/** Whether the stage offers connected accounts: only then are their routes served. */
export function servesConnections(deps: Pick<ApiDeps, "connections" | "config">): boolean {
  return deps.connections !== undefined && deps.config.connections !== undefined;
}

export function registerConnectionRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { connections, config } = deps;
  if (!servesConnections(deps) || !connections || !config.connections) return;
  const publicUrl = config.connections.publicUrl;
  const read = requirePermission(config, "read");
  // Read from the stage's configuration: a name it does not know is refused without loading
  // the connections service.
  const configured = (name: string) => providerOf(config.connections, name) !== undefined;
  const knownProvider = (name: string) => {
    if (!configured(name)) {
      throw new NotFoundError(`This stage has no provider named ${name} for connected accounts.`);
    }
  };
  /** The caller's own, or (an admin's) another principal's. */
  const whose = (c: Context<HttpEnv>, principalId: string | undefined): string => {
    const caller = c.get("principal");
    if (principalId === undefined || principalId === caller.id) return caller.id;
    if (!mayActForOthers(config, caller)) {
      throw new ForbiddenError("Only administrators may read or change others' connections.");
    }
    return principalId;
  };

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/connections",
      tags: ["Connections"],
      summary: "List your connected accounts (an admin: anyone's, or all)",
      description:
        "Never a token. `?principal=<id>` reads another principal's, `?all=true` every principal's: both for administrators only.",
      security: bearerSecurity,
      middleware: [read] as const,
      request: { query: connectionsQuery },
      responses: {
        200: jsonContent(connectionListView, "Connections"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const { principal, all } = c.req.valid("query");
      if (all === "true") {
        if (principal !== undefined) {
          throw new ValidationError("Give either ?principal or ?all=true, not both.");
        }
        if (!mayActForOthers(config, c.get("principal"))) {
          throw new ForbiddenError("Only administrators may read every principal's connections.");
        }
        return c.json({ connections: await connections.listAll() }, 200);
      }
      return c.json({ connections: await connections.list(whose(c, principal)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/connections/providers",
      tags: ["Connections"],
      summary: "The providers you can connect an account at, and whether you have",
      security: bearerSecurity,
      middleware: [read] as const,
      responses: {
        200: jsonContent(connectionProvidersView, "Providers"),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => {
      const mine = await connections.list(c.get("principal").id);
      const providers = (await connections.providers()).map(({ name, scopes }) => {
        const own = mine.find((connection) => connection.provider === name);
        return {
          name,
          scopes,
          connected: own?.status === "connected",
          ...(own ? { status: own.status } : {}),
        };
      });
      return c.json({ providers }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/connections/{provider}",
      tags: ["Connections"],
      summary: "A link that connects your account at the provider, to open in a browser",
      description:
        "The link works for 15 minutes; it holds a ticket standing for you, never a token. Whoever opens it connects their account at the provider to you: open it yourself, and share it with no one.",
      security: bearerSecurity,
      middleware: [read] as const,
      request: {
        params: providerParams,
        body: { required: false, content: { "application/json": { schema: connectBody } } },
      },
      responses: {
        201: jsonContent(connectLinkView, "The link"),
        ...errorResponses(400, 401, 403, 404, 413, 415),
      },
    }),
    async (c) => {
      const { provider } = c.req.valid("param");
      knownProvider(provider);
      const body = (c.req.header("content-length") ?? "0") === "0" ? {} : c.req.valid("json");
      const scopes = body?.scopes;
      const link = await connections.link(c.get("principal"), provider, scopes);
      c.header("Cache-Control", "no-store");
      return c.json(link, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/connections/{provider}",
      tags: ["Connections"],
      summary: "Disconnect an account (revoked at the provider where it can be)",
      description:
        "Your own; an administrator's `?principal=<id>` disconnects another principal's (audited).",
      security: bearerSecurity,
      middleware: [read] as const,
      request: { params: providerParams, query: disconnectQuery },
      responses: {
        200: jsonContent(disconnectedView, "Removed, and whether the provider revoked the tokens"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { provider } = c.req.valid("param");
      const principalId = whose(c, c.req.valid("query").principal);
      const outcome = await connections.disconnect(principalId, provider);
      if (!outcome.removed) {
        knownProvider(provider);
        throw new NotFoundError(`No ${provider} account is connected for ${principalId}.`);
      }
      if (principalId !== c.get("principal").id) {
        // Another principal's: an admin write, recorded as one.
        c.set("permission", "admin");
        c.set("audited", { kind: "connection", id: `${principalId}:${provider}` });
      }
      return c.json(outcome, 200);
    },
  );

  // The browser's side. Not under /v1: a person's browser opens these, with no JSON and no
  // Authorization header (a ticket stands for the caller), and is answered with a redirect or
  // a small page.
  const auth = authenticate(deps);
  /** With a ticket, nobody signs in here; without one, the caller's credentials as anywhere. */
  const signedInUnlessTicket: MiddlewareHandler<HttpEnv> = async (c, next) => {
    if (c.req.query("ticket") !== undefined) return next();
    if (!c.req.header("authorization")) {
      c.header("WWW-Authenticate", "Bearer");
      return page(
        c,
        401,
        "Connect link incomplete",
        "This link holds no ticket. Ask Toolbus for a new connect link (toolbus connections connect <provider>) and open it as it is.",
      );
    }
    return auth(c, async () => {
      await read(c, next);
    });
  };

  app.get("/connect/:provider", signedInUnlessTicket, async (c) => {
    const provider = c.req.param("provider");
    if (!PROVIDER_NAME.test(provider) || !configured(provider)) return unknownProvider(c, provider);
    const query = connectQuery.safeParse({ ticket: c.req.query("ticket") });
    if (!query.success) {
      return page(
        c,
        400,
        "Connect link not valid",
        "This connect link is not valid. Ask for a new one.",
      );
    }
    let started: { location: string; binding: string };
    try {
      started = await connections.begin(
        provider,
        query.data.ticket !== undefined
          ? { ticket: query.data.ticket }
          : { principal: c.get("principal") },
      );
    } catch (error) {
      if (isRefused(error)) return page(c, 400, "Cannot connect", (error as Error).message);
      throw error;
    }
    setCookie(c, COOKIE, started.binding, {
      httpOnly: true,
      sameSite: "Lax",
      // One per provider: connecting two at once in one browser keeps both bindings.
      path: `/connect/${provider}`,
      maxAge: COOKIE_MAX_AGE,
      secure: publicUrl.startsWith("https:"),
    });
    browserHeaders(c);
    return c.redirect(started.location, 302);
  });

  app.get("/connect/:provider/callback", async (c) => {
    const provider = c.req.param("provider");
    if (!PROVIDER_NAME.test(provider) || !configured(provider)) return unknownProvider(c, provider);
    const binding = getCookie(c, COOKIE);
    deleteCookie(c, COOKIE, {
      path: `/connect/${provider}`,
      httpOnly: true,
      sameSite: "Lax",
      secure: publicUrl.startsWith("https:"),
    });
    const query = callbackQuery.safeParse({
      code: c.req.query("code"),
      state: c.req.query("state"),
      iss: c.req.query("iss"),
      error: c.req.query("error"),
    });
    if (!query.success) {
      return page(c, 400, "Not connected", "The provider's answer is not valid. Start again.");
    }
    try {
      await connections.finish(provider, query.data, binding);
    } catch (error) {
      if (isRefused(error)) return page(c, 400, "Not connected", (error as Error).message);
      throw error;
    }
    const name = displayName(provider);
    return page(c, 200, `${name} connected`, `${name} is connected. You can close this window.`);
  });
}

/** ConnectRefused (connections/service.ts), told by name: its message is for the person. */
function isRefused(error: unknown): boolean {
  return error instanceof Error && error.name === "ConnectRefused";
}

function unknownProvider(c: Context<HttpEnv>, provider: string): Response {
  return page(
    c,
    404,
    "Unknown provider",
    `This stage has no provider named ${provider.slice(0, 64)} for connected accounts.`,
  );
}

/** Nothing cached, and the URL (a ticket, a code) never sent on as a referrer. */
function browserHeaders(c: Context<HttpEnv>): void {
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
}

/** A small, self-contained page: no scripts, no styles, every word escaped. */
function page(
  c: Context<HttpEnv>,
  status: 200 | 400 | 401 | 404,
  title: string,
  message: string,
): Response {
  browserHeaders(c);
  c.header("Content-Security-Policy", PAGE_CSP);
  return c.html(
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Toolbus</title>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
</body>
</html>
`,
    status,
  );
}

const DISPLAY_NAMES: Record<string, string> = { github: "GitHub", google: "Google" };
const displayName = (provider: string) => DISPLAY_NAMES[provider] ?? provider;

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
