import { createPrivateKey, createSign, type KeyObject } from "node:crypto";
import { failureFromStatus, type HttpClient, type OutboundResponse } from "@toolbus/core/outbound";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";
import * as z from "zod";
import { type FoundEvent, plainText } from "./events";
import { isoUtc } from "./time";
import { readJson, send, unreadable } from "./upstream";

export const GOOGLE_CALENDAR_CREDENTIALS = "GOOGLE_CALENDAR_CREDENTIALS";
export const CALENDAR_READONLY_SCOPE = "https://www.googleapis.com/auth/calendar.readonly";

const GOOGLE = "Google Calendar";
const TOKEN_ENDPOINT = "Google's token endpoint";
const MAX_BYTES = 2 * 1024 * 1024;
/** Renew this long before Google says the token expires, so a call never carries a dead one. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * The fields of a service-account key file (the JSON the Google Cloud console downloads) that
 * this tool uses. Its token_uri is not used: the token endpoint is stage configuration.
 */
export const serviceAccountKey = z.looseObject({
  type: z.literal("service_account").optional(),
  client_email: z.email(),
  private_key: z.string().regex(/-----BEGIN (?:RSA )?PRIVATE KEY-----/),
  private_key_id: z.string().min(1).optional(),
});
export type ServiceAccountKey = z.infer<typeof serviceAccountKey>;

/**
 * Reads the secret: the key file's JSON, or the same base64-encoded (easier to store in some
 * secret managers). Returns the reason when it is not a service-account key, never the value.
 */
export function readServiceAccountKey(
  raw: string,
): { ok: true; key: ServiceAccountKey } | { ok: false; reason: string } {
  const trimmed = raw.trim();
  const json = trimmed.startsWith("{") ? trimmed : Buffer.from(trimmed, "base64").toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, reason: `${GOOGLE_CALENDAR_CREDENTIALS} is not JSON (nor base64 JSON).` };
  }
  const parsed = serviceAccountKey.safeParse(value);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join(".")))];
    return {
      ok: false,
      reason:
        `${GOOGLE_CALENDAR_CREDENTIALS} is not a service-account key file ` +
        `(check ${fields.join(", ")}).`,
    };
  }
  // Keys pasted through a shell or an .env file often arrive with their newlines escaped.
  const key = { ...parsed.data, private_key: parsed.data.private_key.replace(/\\n/g, "\n") };
  return { ok: true, key };
}

export interface JwtClaims {
  iss: string;
  scope: string;
  aud: string;
  iat: number;
  exp: number;
  sub?: string;
}

/** The assertion of OAuth 2.0's JWT bearer grant (RFC 7523), signed RS256 with the key. */
export function signServiceAccountJwt(key: ServiceAccountKey, claims: JwtClaims): string {
  const header = {
    alg: "RS256",
    typ: "JWT",
    ...(key.private_key_id ? { kid: key.private_key_id } : {}),
  };
  const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const signer = createSign("RSA-SHA256");
  signer.update(signingInput);
  return `${signingInput}.${signer.sign(privateKey(key)).toString("base64url")}`;
}

function base64url(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}

function privateKey(key: ServiceAccountKey): KeyObject {
  try {
    return createPrivateKey(key.private_key);
  } catch {
    // No cause: what OpenSSL says about a key is no business of a log line.
    throw new ToolFailure(
      Failures.unavailable(`The private key in ${GOOGLE_CALENDAR_CREDENTIALS} could not be read.`),
    );
  }
}

const tokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().positive().optional(),
  token_type: z.string().optional(),
});

export interface TokenRequest {
  tokenUrl: string;
  scope: string;
  /** A Workspace user to act as (domain-wide delegation). */
  subject?: string;
  http: HttpClient;
  signal: AbortSignal;
  now(): Date;
}

/**
 * Access tokens by service account, scope, subject and endpoint, kept until shortly before
 * they expire. Module memory, so a warm Lambda or the local server asks Google once an hour.
 */
export class ServiceAccountTokens {
  private readonly tokens = new Map<string, { token: string; renewAtMs: number }>();

  async accessToken(key: ServiceAccountKey, request: TokenRequest): Promise<string> {
    const cacheKey = this.cacheKey(key, request);
    const nowMs = request.now().getTime();
    const cached = this.tokens.get(cacheKey);
    if (cached && nowMs < cached.renewAtMs) return cached.token;

    const iat = Math.floor(nowMs / 1000);
    const assertion = signServiceAccountJwt(key, {
      iss: key.client_email,
      scope: request.scope,
      aud: request.tokenUrl,
      iat,
      exp: iat + 3600,
      ...(request.subject ? { sub: request.subject } : {}),
    });
    const body = new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion,
    }).toString();
    const response = await send(TOKEN_ENDPOINT, request.http, request.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body,
      // The grant is idempotent, so one retry of a 5xx or a dropped connection is safe.
      retries: 1,
      maxBytes: 64 * 1024,
      signal: request.signal,
    });
    if (response.status >= 400 && response.status < 500 && response.status !== 429) {
      throw new ToolFailure(
        Failures.unavailable(
          `${TOKEN_ENDPOINT} refused the service account (${response.status}` +
            `${oauthError(response)}). Check ${GOOGLE_CALENDAR_CREDENTIALS} and, when ` +
            "impersonating, the domain-wide delegation.",
        ),
      );
    }
    const failure = failureFromStatus(response, TOKEN_ENDPOINT);
    if (failure) throw failure;
    const parsed = tokenResponse.safeParse(readJson(response));
    if (!parsed.success) throw unreadable(TOKEN_ENDPOINT);
    const lifetimeMs = (parsed.data.expires_in ?? 3600) * 1000;
    const renewAtMs = nowMs + Math.max(0, lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2));
    this.tokens.set(cacheKey, { token: parsed.data.access_token, renewAtMs });
    return parsed.data.access_token;
  }

  /** Drops a token Google no longer accepts, so the next request gets a fresh one. */
  forget(key: ServiceAccountKey, request: Pick<TokenRequest, "tokenUrl" | "scope" | "subject">) {
    this.tokens.delete(this.cacheKey(key, request));
  }

  private cacheKey(
    key: ServiceAccountKey,
    request: Pick<TokenRequest, "tokenUrl" | "scope" | "subject">,
  ): string {
    return [key.client_email, request.scope, request.subject ?? "", request.tokenUrl].join("\n");
  }
}

/** The cache the calendar tool uses. */
export const serviceAccountTokens = new ServiceAccountTokens();

/** The OAuth error code (invalid_grant...) when the body has a plain one; never free text. */
function oauthError(response: OutboundResponse): string {
  try {
    const error = (response.json() as { error?: unknown }).error;
    return typeof error === "string" && /^[a-z_]{1,40}$/.test(error) ? `: ${error}` : "";
  } catch {
    return "";
  }
}

const eventTime = z.object({
  date: z.iso.date().optional(),
  dateTime: z.iso.datetime({ offset: true }).optional(),
  timeZone: z.string().optional(),
});

/** An item of Events: list (https://developers.google.com/calendar/api/v3/reference/events). */
const googleEvent = z.object({
  id: z.string().min(1),
  status: z.string().optional(),
  summary: z.string().optional(),
  description: z.string().optional(),
  location: z.string().optional(),
  htmlLink: z.string().optional(),
  iCalUID: z.string().optional(),
  start: eventTime,
  end: eventTime,
});

const eventsPage = z.object({
  items: z.array(z.unknown()).default([]),
  nextPageToken: z.string().optional(),
  timeZone: z.string().optional(),
});

export interface GoogleEventsRequest {
  /** The service account the stage reads with; or `userToken`, the caller's own. */
  key?: ServiceAccountKey;
  /** The caller's access token from their Google connection (connected accounts). */
  userToken?: string;
  apiBaseUrl: string;
  tokenUrl: string;
  calendarId: string;
  subject?: string;
  timeMin: number;
  timeMax: number;
  maxResults: number;
  http: HttpClient;
  signal: AbortSignal;
  now(): Date;
  tokens?: ServiceAccountTokens;
}

export interface GoogleEvents {
  events: FoundEvent[];
  /** Google has more events in the window than were asked for. */
  hasMore: boolean;
  /** Items that were neither events nor cancelled ones. */
  unreadable: number;
}

/** Events: list for one calendar, recurring events expanded by Google, earliest first. */
export async function listGoogleEvents(request: GoogleEventsRequest): Promise<GoogleEvents> {
  const tokens = request.tokens ?? serviceAccountTokens;
  const tokenRequest: TokenRequest = {
    tokenUrl: request.tokenUrl,
    scope: CALENDAR_READONLY_SCOPE,
    ...(request.subject ? { subject: request.subject } : {}),
    http: request.http,
    signal: request.signal,
    now: request.now,
  };
  const query = new URLSearchParams({
    timeMin: isoUtc(request.timeMin),
    timeMax: isoUtc(request.timeMax),
    maxResults: String(request.maxResults),
    singleEvents: "true",
    orderBy: "startTime",
  });
  const url =
    `${request.apiBaseUrl.replace(/\/+$/, "")}/calendars/` +
    `${encodeURIComponent(request.calendarId)}/events?${query}`;
  const { key, userToken } = request;
  const list = async () => {
    const token = userToken ?? (key ? await tokens.accessToken(key, tokenRequest) : "");
    return send(GOOGLE, request.http, url, {
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      retries: 1,
      maxBytes: MAX_BYTES,
      signal: request.signal,
    });
  };

  let response = await list();
  if (response.status === 401 && key && !userToken) {
    // A cached token can be revoked before it expires: one fresh token, then give up.
    tokens.forget(key, tokenRequest);
    response = await list();
  }
  if (userToken && (response.status === 401 || response.status === 403)) {
    throw new ToolFailure(
      Failures.unavailable(
        `${GOOGLE} refused your connection (${response.status}): reconnect your Google account, or check the calendarId setting.`,
      ),
    );
  }
  if (response.status === 401 || response.status === 403) {
    throw new ToolFailure(
      Failures.unavailable(
        `${GOOGLE} refused the service account (${response.status}). Share the calendar with ` +
          "the service account's email address, or check the calendarId setting.",
      ),
    );
  }
  if (response.status === 404) {
    throw new ToolFailure(
      Failures.unavailable(
        `${GOOGLE} has no calendar "${request.calendarId}" that the service account can ` +
          "read (404). Check the calendarId setting and that the calendar is shared with it.",
      ),
    );
  }
  const failure = failureFromStatus(response, GOOGLE);
  if (failure) throw failure;
  const page = eventsPage.safeParse(readJson(response));
  if (!page.success) throw unreadable(GOOGLE);

  const events: FoundEvent[] = [];
  let unreadableItems = 0;
  for (const item of page.data.items) {
    // Cancelled instances of recurring events come back with little more than their id.
    if ((item as { status?: unknown } | null)?.status === "cancelled") continue;
    const parsed = googleEvent.safeParse(item);
    const found = parsed.success ? toFoundEvent(parsed.data) : undefined;
    if (found) events.push(found);
    else unreadableItems++;
  }
  return { events, hasMore: page.data.nextPageToken !== undefined, unreadable: unreadableItems };
}

function toFoundEvent(item: z.infer<typeof googleEvent>): FoundEvent | undefined {
  const allDay = item.start.date !== undefined;
  const start = allDay ? item.start.date : item.start.dateTime;
  const end = allDay ? item.end.date : item.end.dateTime;
  if (start === undefined || end === undefined) return undefined;
  const startMs = Date.parse(allDay ? `${start}T00:00:00Z` : start);
  const endMs = Date.parse(allDay ? `${end}T00:00:00Z` : end);
  const description = item.description === undefined ? undefined : plainText(item.description);
  const location = item.location?.trim();
  const url = item.htmlLink && /^https?:\/\//i.test(item.htmlLink) ? item.htmlLink : undefined;
  const timeZone = item.start.timeZone;
  return {
    startMs,
    ...(item.iCalUID ? { uid: item.iCalUID } : {}),
    event: {
      id: item.id,
      title: item.summary?.trim() || "(no title)",
      start: allDay ? start : isoUtc(startMs),
      end: allDay ? end : isoUtc(endMs),
      allDay,
      ...(!allDay && timeZone ? { timeZone } : {}),
      ...(location ? { location } : {}),
      ...(description ? { description } : {}),
      ...(url ? { url } : {}),
      source: "google",
    },
  };
}
