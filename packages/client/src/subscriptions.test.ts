import type { ServerResponse } from "node:http";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createToolbusClient } from "./client.js";
import { ToolbusClientError } from "./errors.js";

// The requests client.subscriptions makes and the answers it accepts, against a loopback
// server answering from a script; test/cli-subscriptions.test.ts runs them against the real API.

const ID = "sub_0123456789abcdef01234567";
const SUBSCRIPTION = {
  id: ID,
  name: "results",
  owner: { id: "key-1", role: "member" },
  pattern: '{"source":["toolbus"]}',
  target: { kind: "webhook", url: "https://example.com/hook" },
  status: "active",
  failureStreak: 0,
  createdAt: "2026-11-24T10:00:00.000Z",
  updatedAt: "2026-11-24T10:00:00.000Z",
  revision: 1,
};

interface Seen {
  method: string;
  /** Path and query, as the server received them. */
  url: string;
  body: unknown;
}

/** An answer: a status and JSON body (none for an empty answer). */
type Answer = { status?: number; json?: unknown };

const servers: Upstream[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function send(response: ServerResponse, { status = 200, json }: Answer) {
  if (json === undefined) response.writeHead(status).end();
  else response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
}

/**
 * A client of a loopback server (under a stage path, as API Gateway serves it) that answers
 * each request with `answer`; `seen()` is every request it received.
 */
async function scripted(answer: (seen: Seen) => Answer) {
  const seenOf = (request: Upstream["requests"][number]): Seen => ({
    method: request.method,
    url: `${request.url.pathname}${request.url.search}`,
    body: request.body === "" ? undefined : JSON.parse(request.body),
  });
  const server = await startUpstream((request, response) => {
    send(response, answer(seenOf(request)));
  });
  servers.push(server);
  const client = createToolbusClient({ baseUrl: `${server.origin}/stage`, apiKey: "k" });
  return { client, seen: () => server.requests.map(seenOf) };
}

describe("client.subscriptions", () => {
  it("sends each request to its path, with the bodies the API takes", async () => {
    const { client, seen } = await scripted(({ url }) => {
      if (url.endsWith("/redrive")) return { json: { redriven: 2 } };
      if (url.endsWith("/replay")) {
        return { status: 202, json: { replayId: "r", queued: 1, events: 2, complete: true } };
      }
      if (url.includes("/failures")) return { json: { failures: [], cursor: null } };
      if (url.endsWith("/rotate-secret")) {
        return { json: { subscription: SUBSCRIPTION, secret: "whsec_x" } };
      }
      return { json: SUBSCRIPTION };
    });
    await client.subscriptions.get(ID);
    await client.subscriptions.pause(ID);
    await client.subscriptions.resume(ID);
    await client.subscriptions.rotateSecret(ID);
    await client.subscriptions.failures(ID, { limit: 10, cursor: "c/1" });
    expect(await client.subscriptions.redrive(ID)).toBe(2);
    await client.subscriptions.redrive(ID, ["k1", "k2"]);
    expect(await client.subscriptions.replay(ID, "run-1")).toEqual({
      replayId: "r",
      queued: 1,
      events: 2,
      complete: true,
    });
    const base = `/stage/v1/subscriptions/${ID}`;
    expect(seen()).toEqual([
      { method: "GET", url: base, body: undefined },
      { method: "POST", url: `${base}/pause`, body: undefined },
      { method: "POST", url: `${base}/resume`, body: undefined },
      { method: "POST", url: `${base}/rotate-secret`, body: undefined },
      { method: "GET", url: `${base}/failures?limit=10&cursor=c%2F1`, body: undefined },
      { method: "POST", url: `${base}/redrive`, body: {} },
      { method: "POST", url: `${base}/redrive`, body: { eventKeys: ["k1", "k2"] } },
      { method: "POST", url: `${base}/replay`, body: { runId: "run-1" } },
    ]);
  });

  it("keeps an id inside its path segment", async () => {
    const { client, seen } = await scripted(() => ({ json: SUBSCRIPTION }));
    await client.subscriptions.get("../keys");
    expect(seen()[0]?.url).toBe("/stage/v1/subscriptions/..%2Fkeys");
  });

  it("resolves remove on the API's empty 204", async () => {
    const { client, seen } = await scripted(() => ({ status: 204 }));
    await expect(client.subscriptions.remove(ID)).resolves.toBeUndefined();
    expect(seen()).toEqual([
      { method: "DELETE", url: `/stage/v1/subscriptions/${ID}`, body: undefined },
    ]);
  });

  it("keeps fields the API adds later, and refuses an answer missing promised ones", async () => {
    const later = { ...SUBSCRIPTION, deliveredCount: 3 };
    const { client } = await scripted(({ url }) =>
      url.endsWith("/subscriptions")
        ? { json: { subscriptions: [later] } }
        : { json: { ...SUBSCRIPTION, failureStreak: undefined } },
    );
    expect(await client.subscriptions.list()).toEqual([later]);
    const refused = await client.subscriptions.get(ID).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ToolbusClientError);
    expect(refused).toMatchObject({
      code: "invalid_response",
      details: [expect.objectContaining({ path: "failureStreak" })],
    });
  });

  it("turns the API's refusal into a ToolbusClientError with its status and code", async () => {
    const { client } = await scripted(() => ({
      status: 404,
      json: { error: { code: "not_found", message: `Subscription ${ID} does not exist.` } },
    }));
    await expect(client.subscriptions.failures(ID)).rejects.toMatchObject({
      status: 404,
      code: "not_found",
      message: `Subscription ${ID} does not exist.`,
    });
  });
});
