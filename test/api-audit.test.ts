import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

/**
 * GET /v1/audit (admin): every admin write that succeeded, newest first, with who made it
 * (a key id, never a key), the request, its target, and the versions it replaced and made.
 * Reads and refused writes leave nothing; the new key's secret is never in an entry.
 */
let system: TestToolbus;

interface Entry {
  actor: { keyId: string; role: string };
  action: string;
  target: string;
  status: number;
  before?: string;
  after?: string;
}

beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(async () => {
  await system?.stop();
});

async function audit(query = ""): Promise<{ entries: Entry[]; cursor: string | null }> {
  const response = await system.request(`/v1/audit${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { entries: Entry[]; cursor: string | null };
}

describe("the audit log", () => {
  it("records admin writes with their actor and versions, newest first", async () => {
    const before = (await audit()).entries.length;
    const disabled = await system.request("/v1/tools/static_links/disable", { method: "POST" });
    const { revision } = (await disabled.json()) as { revision: number };
    await system.request("/v1/tools/static_links/enable", {
      method: "POST",
      headers: { "if-match": `"${revision}"` },
    });
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "auditor", role: "member" },
    });
    const { key, keyId } = (await created.json()) as { key: string; keyId: string };
    await system.request(`/v1/keys/${keyId}`, { method: "DELETE" });
    // Reads and refused writes are not admin writes that happened.
    await system.request("/v1/tools");
    await system.request("/v1/tools/no_such_tool/enable", { method: "POST" });

    const { entries } = await audit();
    expect(entries.length - before).toBe(4);
    expect(entries.slice(0, 4)).toEqual([
      expect.objectContaining({ action: "DELETE", target: `/v1/keys/${keyId}` }),
      expect.objectContaining({ action: "POST", target: "/v1/keys", status: 201 }),
      expect.objectContaining({
        action: "POST",
        target: "/v1/tools/static_links/enable",
        before: `"${revision}"`,
        after: `"${revision + 1}"`,
      }),
      expect.objectContaining({
        action: "POST",
        target: "/v1/tools/static_links/disable",
        after: `"${revision}"`,
      }),
    ]);
    for (const entry of entries.slice(0, 4)) {
      expect(entry.actor).toEqual({ keyId: "admin-bootstrap", role: "admin" });
    }
    expect(JSON.stringify(entries)).not.toContain(key);
  });

  it("pages with a cursor and refuses a forged one", async () => {
    const all = (await audit("?limit=100")).entries;
    const paged: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: Entry[]; cursor: string | null } = await audit(
        `?limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      paged.push(...page.entries);
      cursor = page.cursor;
    } while (cursor);
    expect(paged).toEqual(all);
    for (const forged of ["bm90LWEta2V5", "!!", "x".repeat(3000)]) {
      const response = await system.request(`/v1/audit?cursor=${forged}`);
      expect(response.status).toBe(400);
    }
  });

  it("is for admins only", async () => {
    const created = await system.request("/v1/keys", {
      method: "POST",
      json: { name: "viewer", role: "viewer" },
    });
    const { key } = (await created.json()) as { key: string };
    expect((await system.request("/v1/audit", { key })).status).toBe(403);
  });
});
