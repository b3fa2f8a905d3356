import { describe, expect, it } from "vitest";
import { createToolbusClient } from "./client.js";
import { ToolbusClientError } from "./errors.js";

// The requests client.subscriptions makes and the answers it accepts, against a scripted
// fetch; test/cli-subscriptions.test.ts runs them against the real API.

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
  url: string;
  body: unknown;
}

function scripted(answer: (seen: Seen) => Response) {
  const seen: Seen[] = [];
  const client = createToolbusClient({
    baseUrl: "http://toolbus.test/stage",
    apiKey: "k",
    fetch: async (input, init) => {
      const request = {
        method: init?.method ?? "GET",
        url: String(input),
        body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
      };
      seen.push(request);
      return answer(request);
    },
  });
  return { client, seen };
}

describe("client.subscriptions", () => {
  it("sends each request to its path, with the bodies the API takes", async () => {
    const { client, seen } = scripted(({ url }) => {
      if (url.endsWith("/redrive")) return Response.json({ redriven: 2 });
      if (url.endsWith("/replay"))
        return Response.json({ replayId: "r", queued: 1, events: 2 }, { status: 202 });
      if (url.includes("/failures")) return Response.json({ failures: [], cursor: null });
      if (url.endsWith("/rotate-secret"))
        return Response.json({ subscription: SUBSCRIPTION, secret: "whsec_x" });
      return Response.json(SUBSCRIPTION);
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
    });
    const base = `http://toolbus.test/stage/v1/subscriptions/${ID}`;
    expect(seen).toEqual([
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
    const { client, seen } = scripted(() => Response.json(SUBSCRIPTION));
    await client.subscriptions.get("../keys");
    expect(seen[0]?.url).toBe("http://toolbus.test/stage/v1/subscriptions/..%2Fkeys");
  });

  it("resolves remove on the API's empty 204", async () => {
    const { client, seen } = scripted(() => new Response(null, { status: 204 }));
    await expect(client.subscriptions.remove(ID)).resolves.toBeUndefined();
    expect(seen[0]).toMatchObject({ method: "DELETE" });
  });

  it("keeps fields the API adds later, and refuses an answer missing promised ones", async () => {
    const later = { ...SUBSCRIPTION, deliveredCount: 3 };
    const { client } = scripted(({ url }) =>
      url.endsWith("/subscriptions")
        ? Response.json({ subscriptions: [later] })
        : Response.json({ ...SUBSCRIPTION, failureStreak: undefined }),
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
    const { client } = scripted(() =>
      Response.json(
        { error: { code: "not_found", message: `Subscription ${ID} does not exist.` } },
        { status: 404 },
      ),
    );
    await expect(client.subscriptions.failures(ID)).rejects.toMatchObject({
      status: 404,
      code: "not_found",
      message: `Subscription ${ID} does not exist.`,
    });
  });
});
