import { newWebhookSecret, verifyWebhook } from "@toolbus/wire/webhooks/signature";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors";
import { OutboundError } from "../outbound/errors";
import type {
  HttpClient,
  OutboundErrorKind,
  OutboundRequest,
  OutboundResponse,
} from "../outbound/types";
import {
  excerptOf,
  RESPONSE_EXCERPT_CHARS,
  sendWebhook,
  WEBHOOK_RESPONSE_MAX_BYTES,
  WEBHOOK_TIMEOUT_MS,
  type WebhookDelivery,
} from "./webhook-sender";

const secret = newWebhookSecret();
const delivery: WebhookDelivery = {
  url: "https://hooks.example.com/toolbus",
  secret,
  id: "msg_01J9Z3",
  timestamp: 1_700_000_000,
  body: '{"type":"ToolResultReceived"}',
};

interface Sent {
  url: string;
  request: OutboundRequest;
}

/** An HttpClient that answers every request the same way and remembers what it was asked. */
function client(answer: Partial<OutboundResponse> | Error): { http: HttpClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const http: HttpClient = {
    request: async (url, request = {}) => {
      sent.push({ url, request });
      if (answer instanceof Error) throw answer;
      const body = answer.body ?? new Uint8Array(0);
      return {
        status: 200,
        headers: new Headers(),
        url,
        redirects: [],
        body,
        text: () => new TextDecoder().decode(body),
        json: () => JSON.parse(new TextDecoder().decode(body)),
        elapsedMs: 1,
        ...answer,
      };
    },
  };
  return { http, sent };
}

const bodyOf = (text: string) => new TextEncoder().encode(text);

describe("sendWebhook's request", () => {
  it("is one signed JSON POST that neither follows redirects nor retries by itself", async () => {
    const { http, sent } = client({ status: 204 });
    await sendWebhook(http, delivery);

    expect(sent).toHaveLength(1);
    const [{ url, request }] = sent as [Sent];
    expect(url).toBe(delivery.url);
    expect(request).toMatchObject({
      method: "POST",
      body: delivery.body,
      followRedirects: false,
      retries: 0,
      timeoutMs: WEBHOOK_TIMEOUT_MS,
      maxBytes: WEBHOOK_RESPONSE_MAX_BYTES,
    });
    expect(request.headers?.["content-type"]).toBe("application/json");
    const check = verifyWebhook({
      secret,
      headers: request.headers ?? {},
      body: request.body ?? "",
      now: delivery.timestamp,
    });
    expect(check).toEqual({ ok: true, id: delivery.id, timestamp: delivery.timestamp });
  });

  it("passes the caller's timeout and signal on", async () => {
    const { http, sent } = client({ status: 200 });
    const signal = new AbortController().signal;
    await sendWebhook(http, { ...delivery, timeoutMs: 2_500, signal });
    expect(sent[0]?.request).toMatchObject({ timeoutMs: 2_500, signal });
  });

  it("is never made with an invalid secret", async () => {
    const { http, sent } = client({ status: 200 });
    await expect(sendWebhook(http, { ...delivery, secret: "whsec_short" })).rejects.toThrow(
      ValidationError,
    );
    expect(sent).toHaveLength(0);
  });
});

describe("sendWebhook's outcome", () => {
  it.each([200, 201, 202, 204, 299])("is a success for %i", async (status) => {
    const { http } = client({ status, body: bodyOf("thanks") });
    expect(await sendWebhook(http, delivery)).toMatchObject({ ok: true, status });
  });

  it.each([400, 401, 403, 404, 408, 409, 413, 422, 425, 429, 500, 502, 503, 504])(
    "is a retryable failure for %i",
    async (status) => {
      const { http } = client({ status, body: bodyOf("nope") });
      expect(await sendWebhook(http, delivery)).toMatchObject({
        ok: false,
        retryable: true,
        kind: "status",
        status,
        responseExcerpt: "nope",
        error: `the receiver answered ${status}`,
      });
    },
  );

  it("is final for 410 Gone, which asks for no more deliveries", async () => {
    const { http } = client({ status: 410 });
    const outcome = await sendWebhook(http, delivery);
    expect(outcome).toMatchObject({ ok: false, retryable: false, gone: true, status: 410 });
    expect(outcome).not.toHaveProperty("responseExcerpt");
  });

  it("names where a redirect pointed, resolved against the webhook URL", async () => {
    const headers = new Headers({ location: "/v2/toolbus?x=1" });
    const { http } = client({ status: 308, headers });
    const outcome = await sendWebhook(http, delivery);
    expect(outcome).toMatchObject({
      ok: false,
      retryable: true,
      kind: "redirect",
      status: 308,
      location: "https://hooks.example.com/v2/toolbus?x=1",
      error: expect.stringMatching(/final URL/),
    });
  });

  it("carries Retry-After in seconds or as a date", async () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const seconds = client({ status: 429, headers: new Headers({ "retry-after": "120" }) });
    expect(await sendWebhook(seconds.http, { ...delivery, now })).toMatchObject({
      retryAfterMs: 120_000,
    });
    const date = new Headers({ "retry-after": new Date(now + 90_000).toUTCString() });
    const dated = client({ status: 503, headers: date });
    expect(await sendWebhook(dated.http, { ...delivery, now })).toMatchObject({
      retryAfterMs: 90_000,
    });
  });

  it("leaves retryAfterMs out when Retry-After is missing or unreadable", async () => {
    const { http } = client({ status: 429, headers: new Headers({ "retry-after": "soon" }) });
    expect(await sendWebhook(http, delivery)).not.toHaveProperty("retryAfterMs");
  });

  it.each<[OutboundErrorKind, boolean]>([
    ["blocked", false],
    ["invalid_url", false],
    ["timeout", true],
    ["network", true],
    ["too_large", true],
    ["aborted", true],
    ["too_many_redirects", true],
  ])("for a request that failed with %s has retryable %s", async (kind, retryable) => {
    const { http } = client(new OutboundError(kind, "it failed"));
    const outcome = await sendWebhook(http, delivery);
    expect(outcome).toMatchObject({ ok: false, kind, retryable });
    expect(outcome).not.toHaveProperty("status");
  });

  it("is a retryable network failure when the client throws something unexpected", async () => {
    const { http } = client(new TypeError("socket hang up"));
    expect(await sendWebhook(http, delivery)).toMatchObject({
      ok: false,
      retryable: true,
      kind: "network",
    });
  });
});

describe("excerptOf", () => {
  it("turns control and format characters into single spaces", () => {
    const text = "\u001b[31mred\u001b[0m\r\n\tline\u202eevil\u200bjoined\u0000end";
    expect(excerptOf(text)).toBe("[31mred [0m line evil joined end");
  });

  it("cuts long text to the excerpt length without splitting a character", () => {
    const long = `${"a".repeat(RESPONSE_EXCERPT_CHARS - 2)}😀😀😀😀`;
    const excerpt = excerptOf(long) ?? "";
    expect(Array.from(excerpt)).toHaveLength(RESPONSE_EXCERPT_CHARS);
    expect(excerpt.endsWith("a😀…")).toBe(true);
  });

  it("keeps text that fits as it is and drops text that is only blanks", () => {
    expect(excerptOf('{"error":"bad signature"}')).toBe('{"error":"bad signature"}');
    expect(excerptOf(" \r\n\t ")).toBeUndefined();
  });
});
