import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseStageConfig } from "@toolbus/core";
import { createHttpClient } from "@toolbus/core/outbound";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import {
  RESPONSE_EXCERPT_CHARS,
  sendWebhook,
  WEBHOOK_RESPONSE_MAX_BYTES,
  type WebhookDelivery,
} from "../packages/core/src/subscriptions/webhook-sender";
import { newWebhookSecret } from "../packages/wire/src/webhooks/signature";

/**
 * Webhook deliveries to real HTTP receivers on loopback, checked with the standardwebhooks
 * package (the reference JavaScript verifier) rather than with our own verifyWebhook, so a
 * mistake shared by our signer and our verifier cannot hide.
 */

interface Received {
  method: string;
  headers: IncomingMessage["headers"];
  body: string;
}

interface Receiver {
  url: string;
  received: Received[];
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function receiver(handler: Handler): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      response.on("error", () => {});
      handler(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${port}/hooks/toolbus`, received };
}

const USER_AGENT = "ToolbusWebhooks/1.0 (test)";

function http(allowHosts = ["127.0.0.1"]) {
  const { outbound } = parseStageConfig({ outbound: { allowHosts, userAgent: USER_AGENT } });
  return createHttpClient(outbound);
}

function delivery(
  url: string,
  overrides: Partial<Omit<WebhookDelivery, "secret" | "secrets">> = {},
) {
  return {
    url,
    secret: newWebhookSecret(),
    id: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W",
    timestamp: Math.floor(Date.now() / 1000),
    body: JSON.stringify({
      type: "ToolCallScheduled",
      timestamp: new Date().toISOString(),
      data: { callId: "call_01", tool: "web-search", note: "naïve ☕ \u2028" },
    }),
    ...overrides,
  };
}

/** The three Standard Webhooks headers of a received request, as the library wants them. */
function webhookHeadersOf(received: Received): Record<string, string> {
  const names = ["webhook-id", "webhook-timestamp", "webhook-signature"];
  return Object.fromEntries(names.map((name) => [name, String(received.headers[name])]));
}

describe("a webhook delivery", () => {
  it("succeeds on 2xx and verifies with the reference library", async () => {
    const hooks = await receiver((_request, response) => response.writeHead(204).end());
    const message = delivery(hooks.url);

    const outcome = await sendWebhook(http(), message);

    expect(outcome).toMatchObject({ ok: true, status: 204 });
    const [request] = hooks.received as [Received];
    expect(request.method).toBe("POST");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["user-agent"]).toBe(USER_AGENT);
    expect(request.body).toBe(message.body);
    const verified = new Webhook(message.secret).verify(request.body, webhookHeadersOf(request));
    expect(verified).toEqual(JSON.parse(message.body));
    expect(() =>
      new Webhook(newWebhookSecret()).verify(request.body, webhookHeadersOf(request)),
    ).toThrow(WebhookVerificationError);
  });

  it("verifies with the old and the new secret while a secret is rotated", async () => {
    const hooks = await receiver((_request, response) => response.writeHead(200).end("ok"));
    const next = newWebhookSecret();
    const previous = newWebhookSecret();
    const message: WebhookDelivery = {
      ...delivery(hooks.url),
      secret: undefined,
      secrets: [next, previous],
    };

    expect(await sendWebhook(http(), message)).toMatchObject({ ok: true, status: 200 });
    const [request] = hooks.received as [Received];
    expect(request.headers["webhook-signature"]?.toString().split(" ")).toHaveLength(2);
    for (const secret of [next, previous]) {
      expect(new Webhook(secret).verify(request.body, webhookHeadersOf(request))).toEqual(
        JSON.parse(message.body),
      );
    }
  });

  it("is retried after a 500, keeping a sanitized excerpt of the answer", async () => {
    const page = `\u001b[2J<h1>Internal\r\nServer Error</h1>${"x".repeat(2_000)}`;
    const hooks = await receiver((_request, response) => response.writeHead(500).end(page));

    const outcome = await sendWebhook(http(), delivery(hooks.url));

    expect(outcome).toMatchObject({ ok: false, retryable: true, kind: "status", status: 500 });
    const excerpt = outcome.ok ? "" : (outcome.responseExcerpt ?? "");
    expect(excerpt.startsWith("[2J<h1>Internal Server Error</h1>xxx")).toBe(true);
    expect(Array.from(excerpt)).toHaveLength(RESPONSE_EXCERPT_CHARS);
  });

  it("is retried after a 429, no earlier than Retry-After in seconds", async () => {
    const hooks = await receiver((_request, response) =>
      response.writeHead(429, { "retry-after": "120" }).end(),
    );
    expect(await sendWebhook(http(), delivery(hooks.url))).toMatchObject({
      ok: false,
      retryable: true,
      status: 429,
      retryAfterMs: 120_000,
    });
  });

  it("is retried after a 429, no earlier than a Retry-After date", async () => {
    const now = Math.floor(Date.now() / 1000) * 1000;
    const at = new Date(now + 45_000).toUTCString();
    const hooks = await receiver((_request, response) =>
      response.writeHead(429, { "retry-after": at }).end(),
    );
    expect(await sendWebhook(http(), delivery(hooks.url, { now }))).toMatchObject({
      ok: false,
      retryable: true,
      status: 429,
      retryAfterMs: 45_000,
    });
  });

  it("stops for good on 410 Gone", async () => {
    const hooks = await receiver((_request, response) => response.writeHead(410).end());
    expect(await sendWebhook(http(), delivery(hooks.url))).toMatchObject({
      ok: false,
      retryable: false,
      gone: true,
      status: 410,
    });
  });

  it("does not follow a redirect, and names its target", async () => {
    const elsewhere = await receiver((_request, response) => response.writeHead(200).end());
    const hooks = await receiver((_request, response) =>
      response.writeHead(307, { location: elsewhere.url }).end(),
    );

    const outcome = await sendWebhook(http(), delivery(hooks.url));

    expect(outcome).toMatchObject({
      ok: false,
      retryable: true,
      kind: "redirect",
      status: 307,
      location: elsewhere.url,
    });
    expect(hooks.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it("times out, retryably, when the receiver never answers", async () => {
    const hooks = await receiver(() => {
      // Holds the request open; the cleanup closes the connection.
    });
    const started = performance.now();

    const outcome = await sendWebhook(http(), delivery(hooks.url, { timeoutMs: 300 }));

    expect(outcome).toMatchObject({ ok: false, retryable: true, kind: "timeout" });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(hooks.received).toHaveLength(1);
  });

  it("fails retryably when the receiver drops the connection", async () => {
    const hooks = await receiver((request) => request.socket.destroy());
    expect(await sendWebhook(http(), delivery(hooks.url))).toMatchObject({
      ok: false,
      retryable: true,
      kind: "network",
    });
  });

  it("is refused for good before connecting to a forbidden address", async () => {
    const local = await receiver((_request, response) => response.writeHead(200).end());

    const metadata = await sendWebhook(http(), delivery("http://169.254.169.254/latest"));
    const loopback = await sendWebhook(http([]), delivery(local.url));

    for (const outcome of [metadata, loopback]) {
      expect(outcome).toMatchObject({ ok: false, retryable: false, kind: "blocked" });
    }
    expect(local.received).toHaveLength(0);
  });

  it("reads a huge answer only up to its cap", async () => {
    const total = 64 * 1024 * 1024;
    const written = { bytes: 0, finished: false };
    const hooks = await receiver((_request, response) => {
      // No Content-Length: the client has to count while reading, and stop.
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "a");
      const pump = () => {
        while (written.bytes < total && !response.destroyed) {
          written.bytes += chunk.length;
          if (!response.write(chunk)) {
            response.once("drain", pump);
            return;
          }
        }
        if (written.bytes >= total) response.end(() => (written.finished = true));
      };
      pump();
    });

    const outcome = await sendWebhook(http(), delivery(hooks.url));

    expect(outcome).toMatchObject({
      ok: false,
      retryable: true,
      kind: "too_large",
      error: expect.stringContaining(String(WEBHOOK_RESPONSE_MAX_BYTES)),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written.finished).toBe(false);
    expect(written.bytes).toBeLessThan(total / 2);
  });
});
