import type { StageConfig } from "@toolbus/core/config";
import type { Hono } from "hono";
import type { HttpEnv } from "../common/env";

/**
 * Everything the console loads comes from this origin, and no script or style is inline: a
 * text that slipped into the page as markup could not run. The console writes no HTML, so
 * Trusted Types are required with no policy: any string handed to an HTML or script sink is
 * refused. Images may be data URLs, which is how tool results carry them. A stage whose console
 * signs in with its OAuth issuer also lets the page ask that issuer's origin (its metadata, and
 * the token endpoint the code is exchanged at) and, where the token endpoint is elsewhere
 * (Cognito), that origin too, and no other.
 */
export function consoleCsp(...origins: string[]): string {
  const connect = ["'self'", ...new Set(origins)].join(" ");
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${connect}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
  ].join("; ");
}

/** The policy of a stage whose console signs in with API keys only. */
export const CONSOLE_CSP = consoleCsp();

/**
 * What the console's routes read of the stage's configuration: the OAuth issuer, and the
 * client the console is registered as there (`auth.oauth.consoleClientId`, redirect URI
 * `<origin>/console`). With both, the sign-in page offers the issuer's sign-in.
 */
export type ConsoleStageConfig = Pick<StageConfig, "auth">;

type Assets = typeof import("./assets");

/**
 * `/console`: the page, and its script and stylesheet under digest names (cached for good; the
 * page itself never, so a new version is picked up at the next load). The assets are imported
 * on the first request for them, so an API instance that never serves the console never loads
 * them (the cold-start budget of stacks/budgets.ts holds without them).
 */
export function registerConsoleRoutes(app: Hono<HttpEnv>, config: ConsoleStageConfig = {}): void {
  const oauth = config.auth?.oauth;
  const clientId = oauth?.consoleClientId;
  const tokenEndpoint = oauth?.consoleTokenEndpoint;
  const policy =
    oauth && clientId
      ? consoleCsp(
          new URL(oauth.issuer).origin,
          ...(tokenEndpoint ? [new URL(tokenEndpoint).origin] : []),
        )
      : CONSOLE_CSP;
  let loading: Promise<Assets> | undefined;
  const assets = () => {
    loading ??= import("./assets");
    return loading;
  };

  app.get("/console", async (c) => {
    const { CONSOLE_SCRIPT, CONSOLE_STYLES } = await assets();
    c.header("content-security-policy", policy);
    c.header("cache-control", "no-store");
    c.header("referrer-policy", "no-referrer");
    return c.html(page(CONSOLE_SCRIPT.name, CONSOLE_STYLES.name));
  });
  app.get("/console/", (c) => c.redirect("/console", 301));

  // What the sign-in page needs to know of the stage, before anyone signs in: the client id the
  // console is registered as at the stage's issuer (public: a browser's client has no secret),
  // or nothing where it signs in with keys only. Always 200, so a keys-only stage's page logs no
  // failed request. The issuer's endpoints the console reads from the protected-resource
  // metadata and the issuer's own, as any client does; a token endpoint on another origin than
  // the issuer's is the stage's to name, as the page's policy must allow it.
  const settings =
    oauth && clientId
      ? { oauth: { issuer: oauth.issuer, clientId, ...(tokenEndpoint ? { tokenEndpoint } : {}) } }
      : {};
  app.get("/console/settings", (c) => {
    c.header("cache-control", "no-store");
    return c.json(settings, 200);
  });

  app.get("/console/assets/:name", async (c) => {
    const { CONSOLE_SCRIPT, CONSOLE_STYLES } = await assets();
    const name = c.req.param("name");
    const asset =
      name === CONSOLE_SCRIPT.name
        ? { body: CONSOLE_SCRIPT.body, type: "text/javascript; charset=utf-8" }
        : name === CONSOLE_STYLES.name
          ? { body: CONSOLE_STYLES.body, type: "text/css; charset=utf-8" }
          : undefined;
    if (!asset) {
      return c.json({ error: { code: "not_found", message: "No such console asset." } }, 404);
    }
    c.header("content-type", asset.type);
    c.header("cache-control", "public, max-age=31536000, immutable");
    c.header("content-security-policy", policy);
    return c.body(asset.body);
  });
}

/** The page: a frame the script fills. The names are digests, so nothing here needs escaping. */
function page(script: string, styles: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Toolbus console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/${styles}">
<script type="module" src="/console/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>The Toolbus console needs JavaScript. The API itself is described at <a href="/docs">/docs</a>.</noscript></div>
</body>
</html>
`;
}
