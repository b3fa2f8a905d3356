import { createVerify, generateKeyPairSync, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { createHttpClient } from "@toolbus/core/outbound";
import { NOBODY_WAITS } from "@toolbus/core/relay/link";
import {
  type RecordedRequest,
  type Route,
  startUpstream,
  type Upstream,
} from "@toolbus/core/testing";
import type { ToolContext } from "@toolbus/core/tool-definition";
import { type CalendarSettings, calendarSettings } from "./capability";
import { CALENDAR_READONLY_SCOPE } from "./google";

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json; charset=UTF-8", ...headers });
  response.end(JSON.stringify(body));
}

/** Google's error envelope (https://cloud.google.com/apis/design/errors). */
export function googleError(response: ServerResponse, code: number, status: string): void {
  sendJson(response, code, {
    error: { code, message: `${status} (stand-in)`, errors: [{ reason: status }], status },
  });
}

export function fixture(name: string): string {
  return readFileSync(
    new URL(`../../../../test/fixtures/calendar/${name}`, import.meta.url),
    "utf8",
  );
}

/** A service account whose key was made for this test run, and its public half to verify. */
export function makeServiceAccount(clientEmail: string): {
  credentials: string;
  privateKeyPem: string;
  publicKey: KeyObject;
} {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const credentials = JSON.stringify({
    type: "service_account",
    project_id: "toolbus-test",
    private_key_id: "0123456789abcdef",
    private_key: privateKeyPem,
    client_email: clientEmail,
    client_id: "100000000000000000001",
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: "https://oauth2.googleapis.com/token",
  });
  return { credentials, privateKeyPem, publicKey };
}

/** A tool context with the real outbound client, allowed to reach loopback only. */
export function calendarContext(
  settings: Partial<CalendarSettings>,
  options: { secrets?: Record<string, string>; now?: () => Date; signal?: AbortSignal } = {},
): ToolContext<CalendarSettings> {
  const secrets = options.secrets ?? {};
  return {
    callId: "call-1",
    parentRunId: "run-1",
    progress: () => undefined,
    caller: NOBODY_WAITS,
    signal: options.signal ?? new AbortController().signal,
    settings: calendarSettings.parse(settings),
    http: createHttpClient({
      userAgent: "test",
      allowHosts: ["127.0.0.1"],
      defaultTimeoutMs: 2000,
      defaultMaxBytes: 1_000_000,
      networkEnabled: true,
    }),
    secret: (name) => secrets[name],
    now: options.now ?? (() => new Date("2026-01-15T12:00:00Z")),
  };
}

export interface GoogleStandIn extends Upstream {
  tokenUrl: string;
  apiBaseUrl: string;
  /** Access tokens issued, in order. */
  issued: string[];
  /** Why the token endpoint refused assertions, in order. */
  refusals: string[];
  tokenRequests(): RecordedRequest[];
  eventRequests(): RecordedRequest[];
  /** Makes the events endpoint answer 401 to tokens issued so far (a revoked token). */
  revokeIssued(): void;
}

export interface GoogleOptions {
  publicKey: KeyObject;
  clientEmail: string;
  /** The test's clock: `iat` must match it. */
  now: () => Date;
  subject?: string;
  expiresInSeconds?: number;
  /** Answers Events: list once the bearer token checked out; default: the fixture. */
  events?: Route;
}

/**
 * Google's token endpoint and Calendar API on loopback. The token endpoint verifies the JWT
 * bearer assertion's RS256 signature with the service account's public key and checks its
 * claims before issuing a token; the API only answers to tokens it issued.
 */
export async function startGoogle(options: GoogleOptions): Promise<GoogleStandIn> {
  const issued: string[] = [];
  const revoked = new Set<string>();
  const refusals: string[] = [];
  let origin = "";
  const upstream = await startUpstream((request, response) => {
    if (request.method === "POST" && request.url.pathname === "/token") {
      const problem = checkAssertion(request, options, `${origin}/token`);
      if (problem) {
        refusals.push(problem);
        sendJson(response, 400, { error: "invalid_grant", error_description: problem });
        return;
      }
      const token = `ya29.stand-in-${issued.length + 1}-${Math.random().toString(36).slice(2)}`;
      issued.push(token);
      sendJson(response, 200, {
        access_token: token,
        expires_in: options.expiresInSeconds ?? 3599,
        token_type: "Bearer",
      });
      return;
    }
    if (/^\/calendar\/v3\/calendars\/[^/]+\/events$/.test(request.url.pathname)) {
      const token = request.headers.authorization?.replace(/^Bearer /, "") ?? "";
      if (!issued.includes(token) || revoked.has(token)) {
        googleError(response, 401, "UNAUTHENTICATED");
        return;
      }
      if (options.events) return options.events(request, response);
      response.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      response.end(fixture("google-events.json"));
      return;
    }
    googleError(response, 404, "NOT_FOUND");
  });
  origin = upstream.origin;
  return {
    ...upstream,
    tokenUrl: `${origin}/token`,
    apiBaseUrl: `${origin}/calendar/v3`,
    issued,
    refusals,
    tokenRequests: () => upstream.requests.filter((r) => r.url.pathname === "/token"),
    eventRequests: () => upstream.requests.filter((r) => r.url.pathname.endsWith("/events")),
    revokeIssued: () => {
      for (const token of issued) revoked.add(token);
    },
  };
}

function checkAssertion(
  request: RecordedRequest,
  options: GoogleOptions,
  audience: string,
): string | undefined {
  if (!request.headers["content-type"]?.startsWith("application/x-www-form-urlencoded")) {
    return "not form-encoded";
  }
  const form = new URLSearchParams(request.body);
  if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
    return "wrong grant_type";
  }
  const [header, payload, signature, extra] = (form.get("assertion") ?? "").split(".");
  if (!header || !payload || !signature || extra !== undefined) return "not a JWT";
  const verifier = createVerify("RSA-SHA256");
  verifier.update(`${header}.${payload}`);
  if (!verifier.verify(options.publicKey, Buffer.from(signature, "base64url"))) {
    return "Invalid JWT Signature.";
  }
  const head = JSON.parse(Buffer.from(header, "base64url").toString("utf8"));
  if (head.alg !== "RS256" || head.typ !== "JWT") return "wrong JWT header";
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  const nowSeconds = Math.floor(options.now().getTime() / 1000);
  if (claims.iss !== options.clientEmail) return "wrong iss";
  if (claims.scope !== CALENDAR_READONLY_SCOPE) return "wrong scope";
  if (claims.aud !== audience) return "wrong aud";
  if (Math.abs(claims.iat - nowSeconds) > 5) return "iat is not now";
  if (claims.exp !== claims.iat + 3600) return "exp is not iat + 3600";
  if (claims.sub !== options.subject) return "wrong sub";
  return undefined;
}

export { type RecordedRequest, type Route, startUpstream, type Upstream };
