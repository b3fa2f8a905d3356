import { createVerify } from "node:crypto";
import { inspect } from "node:util";
import { createHttpClient } from "@toolbus/core/outbound";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { afterEach, describe, expect, it } from "vitest";
import {
  CALENDAR_READONLY_SCOPE,
  listGoogleEvents,
  readServiceAccountKey,
  type ServiceAccountKey,
  ServiceAccountTokens,
  signServiceAccountJwt,
} from "./google";
import {
  type GoogleStandIn,
  googleError,
  makeServiceAccount,
  sendJson,
  startGoogle,
  startUpstream,
} from "./testing";

const http = createHttpClient({
  userAgent: "test",
  allowHosts: ["127.0.0.1"],
  defaultTimeoutMs: 2000,
  defaultMaxBytes: 1_000_000,
  networkEnabled: true,
});
const signal = new AbortController().signal;
const account = makeServiceAccount("calendar-reader@toolbus-test.iam.gserviceaccount.com");
const key = parsedKey(account.credentials);

function parsedKey(credentials: string): ServiceAccountKey {
  const read = readServiceAccountKey(credentials);
  if (!read.ok) throw new Error(read.reason);
  return read.key;
}

/** A clock the test moves by hand. */
function clock(start = "2026-01-15T12:00:00Z") {
  let ms = Date.parse(start);
  return {
    now: () => new Date(ms),
    advance: (seconds: number) => {
      ms += seconds * 1000;
    },
  };
}

const open: GoogleStandIn[] = [];
async function google(options: Partial<Parameters<typeof startGoogle>[0]> = {}) {
  const stand = await startGoogle({
    publicKey: account.publicKey,
    clientEmail: key.client_email,
    now: () => new Date("2026-01-15T12:00:00Z"),
    ...options,
  });
  open.push(stand);
  return stand;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((stand) => stand.close()));
});

function eventsRequest(stand: GoogleStandIn, tokens: ServiceAccountTokens, now: () => Date) {
  return {
    key,
    apiBaseUrl: stand.apiBaseUrl,
    tokenUrl: stand.tokenUrl,
    calendarId: "team@group.calendar.google.com",
    timeMin: Date.parse("2026-01-15T12:00:00Z"),
    timeMax: Date.parse("2026-02-14T12:00:00Z"),
    maxResults: 25,
    http,
    signal,
    now,
    tokens,
  };
}

async function failureOf(promise: Promise<unknown>): Promise<ToolFailure> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  return error as ToolFailure;
}

/** Nothing a caller or a log could see carries the key, the key file or a token. */
function expectNoSecrets(value: unknown, stand?: GoogleStandIn) {
  const texts = [JSON.stringify(value), String(value), inspect(value, { depth: 10 })];
  if (value instanceof Error) texts.push(value.message, value.stack ?? "");
  const secrets = [
    account.credentials,
    account.privateKeyPem,
    account.privateKeyPem.split("\n")[1] ?? "PRIVATE",
    "PRIVATE KEY",
    ...(stand?.issued ?? []),
  ];
  for (const text of texts) {
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
}

describe("the service-account key", () => {
  it("is read from the key file's JSON", () => {
    expect(key).toMatchObject({
      type: "service_account",
      client_email: "calendar-reader@toolbus-test.iam.gserviceaccount.com",
      private_key_id: "0123456789abcdef",
    });
  });

  it("is read from base64 and with newlines escaped twice", () => {
    expect(parsedKey(Buffer.from(account.credentials).toString("base64")).client_email).toBe(
      key.client_email,
    );
    const escaped = account.credentials.replace(/\\n/g, "\\\\n");
    expect(parsedKey(escaped).private_key).toBe(account.privateKeyPem);
  });

  it("is refused with a reason that names fields, never values", () => {
    const noKey = JSON.stringify({ ...JSON.parse(account.credentials), private_key: "hunter2" });
    const read = readServiceAccountKey(noKey);
    expect(read).toEqual({
      ok: false,
      reason: "GOOGLE_CALENDAR_CREDENTIALS is not a service-account key file (check private_key).",
    });
    expect(JSON.stringify(read)).not.toContain("hunter2");
    expect(readServiceAccountKey("not json at all")).toMatchObject({ ok: false });
    expect(
      readServiceAccountKey(JSON.stringify({ type: "authorized_user", client_email: "a@b.c" })),
    ).toMatchObject({ ok: false });
  });
});

describe("signServiceAccountJwt", () => {
  it("signs RS256 claims that verify with the account's public key", () => {
    const jwt = signServiceAccountJwt(key, {
      iss: key.client_email,
      scope: CALENDAR_READONLY_SCOPE,
      aud: "https://oauth2.googleapis.com/token",
      iat: 1_768_478_400,
      exp: 1_768_482_000,
    });
    const [header, payload, signature] = jwt.split(".") as [string, string, string];
    const decode = (part: string) => JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    expect(decode(header)).toEqual({ alg: "RS256", typ: "JWT", kid: "0123456789abcdef" });
    expect(decode(payload)).toEqual({
      iss: key.client_email,
      scope: CALENDAR_READONLY_SCOPE,
      aud: "https://oauth2.googleapis.com/token",
      iat: 1_768_478_400,
      exp: 1_768_482_000,
    });
    const verifier = createVerify("RSA-SHA256");
    verifier.update(`${header}.${payload}`);
    expect(verifier.verify(account.publicKey, Buffer.from(signature, "base64url"))).toBe(true);
    const other = makeServiceAccount("other@toolbus-test.iam.gserviceaccount.com");
    const wrong = createVerify("RSA-SHA256");
    wrong.update(`${header}.${payload}`);
    expect(wrong.verify(other.publicKey, Buffer.from(signature, "base64url"))).toBe(false);
  });

  it("fails as unavailable, without the key, when the private key cannot be read", () => {
    const broken = {
      ...key,
      private_key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
    };
    let thrown: unknown;
    try {
      signServiceAccountJwt(broken, { iss: "a", scope: "s", aud: "x", iat: 1, exp: 2 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolFailure);
    expect((thrown as ToolFailure).failure).toMatchObject({ kind: "unavailable" });
    expect(inspect(thrown)).not.toContain("AAAA");
  });
});

describe("access tokens", () => {
  it("are requested once and reused until shortly before they expire", async () => {
    const time = clock();
    const stand = await google({ now: time.now });
    const tokens = new ServiceAccountTokens();
    const request = {
      tokenUrl: stand.tokenUrl,
      scope: CALENDAR_READONLY_SCOPE,
      http,
      signal,
      now: time.now,
    };

    const first = await tokens.accessToken(key, request);
    time.advance(1800);
    const second = await tokens.accessToken(key, request);
    expect(second).toBe(first);
    expect(stand.tokenRequests()).toHaveLength(1);

    // expires_in is 3599 s: from 60 s before that, a new token is fetched.
    time.advance(3599 - 60 - 1800);
    const third = await tokens.accessToken(key, request);
    expect(third).not.toBe(first);
    expect(stand.tokenRequests()).toHaveLength(2);
    expect(stand.refusals).toEqual([]);
  });

  it("are kept apart per impersonated user", async () => {
    const stand = await google({ subject: "ada@acme.dev" });
    const tokens = new ServiceAccountTokens();
    const now = () => new Date("2026-01-15T12:00:00Z");
    const base = { tokenUrl: stand.tokenUrl, scope: CALENDAR_READONLY_SCOPE, http, signal, now };
    await tokens.accessToken(key, { ...base, subject: "ada@acme.dev" });
    const refused = await failureOf(tokens.accessToken(key, base));
    expect(refused.failure.kind).toBe("unavailable");
    expect(stand.refusals).toEqual(["wrong sub"]);
    expect(stand.tokenRequests()).toHaveLength(2);
  });

  it("are refused as unavailable when the signature does not verify", async () => {
    const stranger = makeServiceAccount("calendar-reader@toolbus-test.iam.gserviceaccount.com");
    const stand = await google({ publicKey: stranger.publicKey });
    const tokens = new ServiceAccountTokens();
    const failure = await failureOf(
      tokens.accessToken(key, {
        tokenUrl: stand.tokenUrl,
        scope: CALENDAR_READONLY_SCOPE,
        http,
        signal,
        now: () => new Date("2026-01-15T12:00:00Z"),
      }),
    );
    expect(failure.failure).toMatchObject({
      kind: "unavailable",
      retryable: false,
      recovery: "replan",
    });
    expect(failure.failure.message).toContain("refused the service account (400: invalid_grant)");
    expect(stand.refusals).toEqual(["Invalid JWT Signature."]);
    expectNoSecrets(failure, stand);
  });

  it("report a broken or rate-limited token endpoint by kind", async () => {
    const tokens = new ServiceAccountTokens();
    const now = () => new Date("2026-01-15T12:00:00Z");
    const cases: [number | "garbage", string][] = [
      [500, "upstream_error"],
      [429, "rate_limited"],
      ["garbage", "upstream_error"],
    ];
    for (const [answer, kind] of cases) {
      const broken = await startUpstream((_, response) => {
        if (answer === "garbage") {
          response.writeHead(200, { "content-type": "application/json" });
          response.end("{not json");
        } else sendJson(response, answer, { error: "x" }, { "retry-after": "300" });
      });
      const failure = await failureOf(
        tokens.accessToken(key, {
          tokenUrl: `${broken.origin}/token`,
          scope: "s",
          http,
          signal,
          now,
        }),
      );
      await broken.close();
      expect(failure.failure.kind).toBe(kind);
      expectNoSecrets(failure);
    }
  });
});

describe("listGoogleEvents", () => {
  it("asks for single events in start order and reads timed and all-day events", async () => {
    const stand = await google();
    const now = () => new Date("2026-01-15T12:00:00Z");
    const result = await listGoogleEvents(eventsRequest(stand, new ServiceAccountTokens(), now));

    const [request] = stand.eventRequests();
    expect(request?.url.pathname).toBe(
      "/calendar/v3/calendars/team%40group.calendar.google.com/events",
    );
    expect(Object.fromEntries(request?.url.searchParams ?? [])).toEqual({
      timeMin: "2026-01-15T12:00:00Z",
      timeMax: "2026-02-14T12:00:00Z",
      maxResults: "25",
      singleEvents: "true",
      orderBy: "startTime",
    });
    expect(request?.headers.authorization).toBe(`Bearer ${stand.issued[0]}`);

    expect(result.hasMore).toBe(false);
    expect(result.unreadable).toBe(0);
    expect(result.events.map((found) => found.event)).toEqual([
      {
        id: "4k9v0c2q1l8m3n5p7r9t1v3x5z",
        title: "Quarterly planning",
        start: "2026-01-16T17:00:00Z",
        end: "2026-01-16T18:30:00Z",
        allDay: false,
        timeZone: "America/Los_Angeles",
        location: "Room 4, Acme HQ",
        description: "Agenda\n1. Roadmap\n2. Hiring & budget",
        url: "https://www.google.com/calendar/event?eid=NGs5djBjMnExbDhtM241cDdyOXQxdjN4NXogYWNtZQ",
        source: "google",
      },
      {
        id: "holiday2026mlk",
        title: "Company holiday",
        start: "2026-01-19",
        end: "2026-01-20",
        allDay: true,
        url: "https://www.google.com/calendar/event?eid=aG9saWRheTIwMjZtbGsgYWNtZQ",
        source: "google",
      },
      {
        id: "5r2n8b1c4d7e0f3g6h9j2k5m8p",
        title: "Release party: Widget 2.0",
        start: "2026-01-22T17:00:00Z",
        end: "2026-01-22T19:00:00Z",
        allDay: false,
        timeZone: "Europe/Berlin",
        location: "Acme HQ, Main Street 1, Berlin",
        description: "Celebrate the 2.0 release with the maintainers.",
        url: "https://www.google.com/calendar/event?eid=NXIybjhiMWM0ZDdlMGYzZzZoOWoyazVtOHAgYWNtZQ",
        source: "google",
      },
    ]);
    expect(result.events[2]?.uid).toBe("release-party-2026@acme.dev");
  });

  it("reuses the token across calls and replaces one Google stopped accepting", async () => {
    const stand = await google();
    const tokens = new ServiceAccountTokens();
    const now = () => new Date("2026-01-15T12:00:00Z");
    await listGoogleEvents(eventsRequest(stand, tokens, now));
    await listGoogleEvents(eventsRequest(stand, tokens, now));
    expect(stand.tokenRequests()).toHaveLength(1);

    stand.revokeIssued();
    const result = await listGoogleEvents(eventsRequest(stand, tokens, now));
    expect(result.events).toHaveLength(3);
    expect(stand.tokenRequests()).toHaveLength(2);
    expect(stand.eventRequests().at(-1)?.headers.authorization).toBe(`Bearer ${stand.issued[1]}`);
  });

  it.each([
    [403, "PERMISSION_DENIED", "refused the service account (403)"],
    [404, "NOT_FOUND", 'no calendar "team@group.calendar.google.com"'],
  ])("reports %i as unavailable", async (status, reason, message) => {
    const stand = await google({ events: (_, response) => googleError(response, status, reason) });
    const now = () => new Date("2026-01-15T12:00:00Z");
    const failure = await failureOf(
      listGoogleEvents(eventsRequest(stand, new ServiceAccountTokens(), now)),
    );
    expect(failure.failure).toMatchObject({ kind: "unavailable", recovery: "replan" });
    expect(failure.failure.message).toContain(message);
    expectNoSecrets(failure, stand);
  });

  it("gives up as unavailable when even a fresh token gets 401", async () => {
    const stand = await google({
      events: (_, response) => googleError(response, 401, "UNAUTHENTICATED"),
    });
    const now = () => new Date("2026-01-15T12:00:00Z");
    const failure = await failureOf(
      listGoogleEvents(eventsRequest(stand, new ServiceAccountTokens(), now)),
    );
    expect(failure.failure.kind).toBe("unavailable");
    expect(failure.failure.message).toContain("the service account (401)");
    expect(stand.tokenRequests()).toHaveLength(2);
  });

  it("says when Google has more events than were asked for, and skips unreadable items", async () => {
    const stand = await google({
      events: (_, response) =>
        sendJson(response, 200, {
          kind: "calendar#events",
          nextPageToken: "CigKGjRrOXYwYzJxMWw4bTNuNXA3cjl0MXYzeDV6GAEggICA",
          items: [
            { id: "no-times", status: "confirmed", summary: "Broken" },
            {
              id: "ok",
              status: "confirmed",
              start: { date: "2026-01-20" },
              end: { date: "2026-01-21" },
            },
          ],
        }),
    });
    const now = () => new Date("2026-01-15T12:00:00Z");
    const result = await listGoogleEvents(eventsRequest(stand, new ServiceAccountTokens(), now));
    expect(result.hasMore).toBe(true);
    expect(result.unreadable).toBe(1);
    expect(result.events.map((found) => found.event.title)).toEqual(["(no title)"]);
  });
});
