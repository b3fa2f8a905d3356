import { readFileSync } from "node:fs";
import { ASSETS_MODULE, buildConsoleAssets } from "@toolbus/console/build";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStage,
  expectOnly,
  signedInPage,
  signIn,
  startConsoleStage,
} from "./support/console";

let stage: ConsoleStage;

beforeAll(async () => {
  stage = await startConsoleStage();
}, 60_000);
afterAll(() => stage?.stop());

describe("the console's page and assets", () => {
  it("is served at /console with a policy that allows only its own origin and no inline code", async () => {
    const response = await fetch(`${stage.url}/console`);
    expect(response.status).toBe(200);
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("default-src 'self'");
    expect(policy).not.toContain("unsafe-inline");
    expect(policy).not.toContain("unsafe-eval");
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style=/);
    expect(html).not.toMatch(/https?:\/\//);
    const assets = [...html.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map(
      (found) => found[1],
    );
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const loaded = await fetch(`${stage.url}${asset}`);
      expect(loaded.status).toBe(200);
      expect(loaded.headers.get("cache-control")).toContain("immutable");
    }
  });

  it("answers 404 for an asset it does not have", async () => {
    const response = await fetch(`${stage.url}/console/assets/app-000000000000.js`);
    expect(response.status).toBe(404);
  });

  it("commits exactly what its source builds to", async () => {
    expect(await buildConsoleAssets()).toBe(readFileSync(ASSETS_MODULE, "utf8"));
  });

  it("never builds markup from strings in its code", () => {
    const source = readFileSync(ASSETS_MODULE, "utf8");
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });
});

describe("GET /v1/me", () => {
  it("tells each role what it may do, from the stage's access rules", async () => {
    const viewer = await stage.key("me-viewer", "viewer");
    const asViewer = await stage.system.request("/v1/me", { key: viewer.key });
    expect(asViewer.status).toBe(200);
    expect(await asViewer.json()).toEqual({
      id: viewer.keyId,
      role: "viewer",
      kind: "key",
      permissions: ["read"],
      roles: ["viewer", "member", "admin"],
      connections: false,
      // The key it signed in with: its record, never the key.
      key: {
        keyId: viewer.keyId,
        name: "me-viewer",
        role: "viewer",
        createdAt: expect.any(String),
      },
    });
    const member = await stage.key("me-member", "member");
    const asMember = (await (await stage.system.request("/v1/me", { key: member.key })).json()) as {
      permissions: string[];
    };
    expect(asMember.permissions).toEqual(["read", "call", "subscribe"]);
    const asAdmin = (await (await stage.system.request("/v1/me")).json()) as {
      permissions: string[];
      key?: unknown;
    };
    expect(asAdmin.permissions).toEqual(["read", "call", "admin", "subscribe", "approve"]);
    // The stage's administrator key is configuration, not a stored key with a record.
    expect(asAdmin.key).toBeUndefined();
  });

  it("answers 401 without a key", async () => {
    expect((await stage.system.request("/v1/me", { key: null })).status).toBe(401);
  });
});

describe("signing in", () => {
  it("shows the catalog with the tools the key's role may see", async () => {
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    const rows = page.getByRole("row");
    expect(await rows.count()).toBeGreaterThan(5);
    expect(await page.getByRole("link", { name: "Catalog" }).getAttribute("aria-current")).toBe(
      "page",
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("refuses a wrong key and stays on the sign-in page", async () => {
    const { page, problems } = await stage.page();
    await page.goto(`${stage.url}/console`);
    await page.getByLabel("API key").fill("tbk_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").getByText("That key or token was refused.").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // The API's refusal of the key, and nothing else.
    expectOnly(problems, ["401 GET /v1/me"]);
    await page.context().close();
  });

  it("sends the person back to sign-in when the key is revoked mid-session", async () => {
    const { key, keyId } = await stage.key("revoked-mid-session", "viewer");
    const { page, problems } = await signedInPage(stage, key);
    const revoked = await stage.system.request(`/v1/keys/${keyId}`, { method: "DELETE" });
    expect(revoked.status).toBeLessThan(300);
    // The next thing the person does asks the API, which now refuses the key.
    await page.evaluate('location.hash = "#/catalog?again=1"');
    await page.getByText("Your session ended").waitFor();
    expect(await page.getByLabel("API key").isVisible()).toBe(true);
    // Why is news: it has the focus, so a screen reader reads it out.
    expect(await page.evaluate("document.activeElement && document.activeElement.id")).toBe(
      "session-ended",
    );
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    // The catalog's reads go out together: the first the API refuses ends the session and aborts
    // the others, so which of them are answered first is a race. Nothing else went wrong.
    const refusals = ["401 GET /v1/tools", "401 GET /v1/toolsets", "401 GET /v1/capabilities"];
    expect(problems).not.toEqual([]);
    expect(problems.filter((problem) => !refusals.includes(problem))).toEqual([]);
    await page.context().close();
  });

  it("renders the page it lands on once", async () => {
    const { page, problems } = await stage.page();
    const reads: string[] = [];
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname === "/v1/tools") reads.push(url.pathname);
    });
    await signIn(stage, page, stage.system.adminKey);
    await page.getByRole("row").first().waitFor();
    await page.waitForTimeout(500);
    expect(reads).toEqual(["/v1/tools"]);
    // A page reached by signing in is news: its heading has the focus.
    expect(await page.evaluate("document.activeElement && document.activeElement.tagName")).toBe(
      "H1",
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("keeps the tab's sign-in when the API cannot be asked about it, and forgets it only when refused", async () => {
    const { key } = await stage.key("kept-through-outage", "viewer");
    const { page, problems } = await signedInPage(stage, key);
    await page.route("**/v1/me", (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "unavailable", message: "Back in a moment." } }),
      }),
    );
    await page.reload();
    await page.getByRole("alert").getByText("Could not check your sign-in with the API").waitFor();
    expect(await page.evaluate("sessionStorage.getItem('toolbus.credential')")).toBe(key);
    // Once the API answers again, trying again signs in with the kept credential.
    await page.unroute("**/v1/me");
    await page.getByRole("button", { name: "Try again" }).click();
    await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();

    // A refusal is another matter: the credential is no good, and is forgotten.
    await page.route("**/v1/me", (route) =>
      route.fulfill({
        status: 401,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "unauthorized", message: "Refused." } }),
      }),
    );
    await page.reload();
    await page.getByLabel("API key").waitFor();
    expect(await page.evaluate("sessionStorage.length")).toBe(0);
    expectOnly(problems, ["503 GET /v1/me", "401 GET /v1/me"]);
    await page.context().close();
  });
});
