import { startUpstream, type Upstream } from "@toolbus/core/testing";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStage,
  expectOnly,
  horizontalOverflow,
  seriousFindings,
  signedInPage,
  signIn,
  startConsoleStage,
} from "./support/console";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";

// The console's administration in a real browser against a real stage: keys made and revoked
// in the page work and stop working through the API; a toolset registered from pasted JSON is
// refreshed, its held change reviewed as a diff and accepted; the API's own validation errors
// show beside the form; a viewer gets "Not allowed"; the audit log lists what was done.

const searchDocs = (description: string) =>
  textTool("searchDocs", description, "found", { q: { type: "string" } });

let stage: ConsoleStage;
let mcp: McpUpstream;
/** A webhook receiver on loopback; it answers 500 on the paths in `down`. */
let receiver: Upstream;
const down = new Set<string>();

beforeAll(async () => {
  mcp = await startMcpUpstream([searchDocs("Searches the docs.")]);
  receiver = await startUpstream((request, response) => {
    if (down.has(request.url.pathname)) {
      response.writeHead(500, { "retry-after": "120" }).end("down for the test");
    } else response.writeHead(204).end();
  });
  stage = await startConsoleStage({
    config: {
      outbound: { allowHosts: ["127.0.0.1"] },
      // A retry window (36 s) shorter than the receiver's Retry-After: a failed delivery is a
      // dead letter at once, and two in a row pause the subscription as failing.
      subscriptions: { retryWindowHours: 0.01, pauseAfterFailures: 2 },
    },
  });
}, 60_000);
afterAll(async () => {
  await stage?.stop();
  await mcp?.close();
  await receiver?.close();
});

async function open(page: Page, path: string, title: string): Promise<void> {
  // Evaluated as text: the tests are typed for Node, not for the page's DOM.
  await page.evaluate(`location.hash = ${JSON.stringify(`#${path}`)}`);
  await page.getByRole("heading", { level: 1, name: title }).waitFor();
}

describe("keys in the console", { timeout: 60_000 }, () => {
  it("creates a key shown once that works through the API, then revokes it so the API answers 401", async () => {
    const { page, problems } = await stage.page();
    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: stage.url,
    });
    await signIn(stage, page, stage.system.adminKey);
    await page.getByRole("link", { name: "Keys" }).click();
    await page.getByRole("heading", { level: 1, name: "Keys" }).waitFor();

    await page.getByLabel("Key name").fill("browser-made");
    await page.getByLabel("Role").selectOption("member");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByText("Copy it now: it is not shown again.").waitFor();
    const key = await page.getByLabel("New key").inputValue();
    expect(await seriousFindings(page)).toEqual([]);
    expect(key.length).toBeGreaterThan(20);

    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByText("Copied to the clipboard.").waitFor();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(key);

    // The key works through the API, as the role chosen in the form.
    const me = await stage.system.request("/v1/me", { key });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { role: string }).role).toBe("member");

    // Shown once: the list never holds the key, and a fresh visit shows no key at all.
    const row = page.getByRole("row").filter({ hasText: "browser-made" });
    await row.getByText("active").waitFor();
    await open(page, "/catalog", "Catalog");
    await open(page, "/admin/keys", "Keys");
    expect(await page.getByLabel("New key").count()).toBe(0);
    expect(await page.getByText(key).count()).toBe(0);

    // Revoking asks first, inline; keeping changes nothing.
    await row.getByRole("button", { name: "Revoke key browser-made" }).click();
    const question = page.getByRole("group", { name: "Revoke key browser-made?" });
    expect(await seriousFindings(page)).toEqual([]);
    await question.getByRole("button", { name: "Keep" }).click();
    await row.getByRole("button", { name: "Revoke key browser-made" }).waitFor();
    expect((await stage.system.request("/v1/me", { key })).status).toBe(200);

    await row.getByRole("button", { name: "Revoke key browser-made" }).click();
    await question.getByRole("button", { name: "Revoke", exact: true }).click();
    await page.getByText("Key browser-made is revoked").waitFor();
    await row.getByText("revoked").waitFor();
    expect((await stage.system.request("/v1/me", { key })).status).toBe(401);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("asks before revoking with the keyboard alone: Escape keeps the key, Enter on Revoke revokes it", async () => {
    const { key } = await stage.key("keyboard-kept", "viewer");
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    await open(page, "/admin/keys", "Keys");
    const row = page.getByRole("row").filter({ hasText: "keyboard-kept" });
    const revoke = row.getByRole("button", { name: "Revoke key keyboard-kept" });
    const focused = () => page.evaluate<string>("document.activeElement?.textContent ?? ''");

    await revoke.focus();
    await page.keyboard.press("Enter");
    // The question takes the button's place, with focus on the safe choice.
    await row.getByRole("group", { name: "Revoke key keyboard-kept?" }).waitFor();
    expect(await focused()).toBe("Keep");
    await page.keyboard.press("Escape");
    await revoke.waitFor();
    expect(await focused()).toBe("Revoke");
    expect((await stage.system.request("/v1/me", { key })).status).toBe(200);

    await page.keyboard.press("Enter");
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toBe("Revoke");
    await page.keyboard.press("Enter");
    await page.getByText("Key keyboard-kept is revoked").waitFor();
    expect((await stage.system.request("/v1/me", { key })).status).toBe(401);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows a viewer the Not allowed page for the keys page, as the API refuses it", async () => {
    const viewer = await stage.key("admin-pages-viewer", "viewer");
    const { page, problems } = await signedInPage(stage, viewer.key);
    // The navigation offers no admin page to a viewer; the address still leads there.
    expect(await page.getByRole("link", { name: "Keys" }).count()).toBe(0);
    await open(page, "/admin/keys", "Not allowed");
    expect(await page.getByRole("button", { name: "Create key" }).count()).toBe(0);
    await open(page, "/admin/audit", "Not allowed");
    await open(page, "/admin/toolsets", "Not allowed");
    // The keys and audit pages asked the API, which refused the viewer; the toolsets page, whose
    // list every role may read, refused it in the page. Nothing else went wrong.
    expectOnly(problems, ["403 GET /v1/keys", "403 GET /v1/audit"]);
    await page.context().close();
  });
});

describe("registered toolsets in the console", { timeout: 90_000 }, () => {
  it("registers an MCP server from pasted JSON, then reviews its changed tool as a diff and accepts it", async () => {
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    await page.getByRole("link", { name: "Toolsets" }).click();
    await page.getByRole("heading", { level: 1, name: "Registered toolsets" }).waitFor();

    const registration = {
      kind: "mcp",
      name: "console_docs",
      description: "The docs team's MCP server",
      owner: "team-docs",
      url: mcp.url,
    };
    await page.getByLabel("Registration (JSON)").fill(JSON.stringify(registration, null, 2));
    await page.getByRole("button", { name: "Register" }).click();
    await page.getByText("Registered console_docs: 1 tool served").waitFor();
    const row = page.getByRole("row").filter({ hasText: "console_docs" });
    await row.getByText(mcp.url).waitFor();
    await row.getByText("nothing waits for review").waitFor();
    const served = await stage.system.request("/v1/tools/search_docs");
    expect(((await served.json()) as { description: string }).description).toBe(
      "Searches the docs.",
    );

    // The server changes its tool; a refresh holds the change and the pin stays served.
    mcp.setTools([searchDocs("Searches the docs, by section.")]);
    await row.getByRole("button", { name: "Refresh toolset console_docs" }).click();
    await page.getByText("1 change held for review (changed search_docs)").waitFor();
    await page.getByRole("link", { name: "Review the changes" }).click();
    await page.getByRole("heading", { level: 1, name: "Review console_docs" }).waitFor();

    const change = page.getByRole("article").filter({ hasText: "Changed: search_docs" });
    const description = change.getByRole("group", { name: "description" });
    await description.getByText("Searches the docs, by section.").waitFor();
    await description.getByText("Searches the docs.", { exact: true }).waitFor();
    expect(await seriousFindings(page)).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await seriousFindings(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(await (await stage.system.request("/v1/tools/search_docs")).json()).toMatchObject({
      description: "Searches the docs.",
    });

    await change.getByRole("button", { name: "Accept the change to search_docs" }).click();
    await page.getByText("Accepted 1 change (search_docs): served from now on.").waitFor();
    await page.getByText("No change waits for review.").waitFor();
    const after = await stage.system.request("/v1/tools/search_docs");
    expect(((await after.json()) as { description: string }).description).toBe(
      "Searches the docs, by section.",
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("lists an http toolset with the origin it calls, and removes it only after asking", async () => {
    const registered = await stage.system.request("/v1/registered-toolsets/console_http", {
      method: "PUT",
      json: {
        kind: "http",
        name: "console_http",
        description: "An HTTP API",
        owner: "team-http",
        tools: [
          {
            id: "console_report",
            title: "Report",
            description: "Builds a report.",
            category: "reference",
            usageHint: "When a report is asked for.",
            url: `${receiver.origin}/report/{id}`,
            inputSchema: {
              type: "object",
              properties: { id: { type: "string" } },
              required: ["id"],
            },
          },
        ],
      },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    await open(page, "/admin/toolsets", "Registered toolsets");
    const row = page.getByRole("row").filter({ hasText: "console_http" });
    await row.getByText(receiver.origin, { exact: true }).waitFor();
    await row.getByRole("cell", { name: "HTTP", exact: true }).waitFor();
    // An http toolset has no server to list again.
    expect(await row.getByRole("button", { name: /^Refresh/ }).count()).toBe(0);

    await row.getByRole("button", { name: "Remove toolset console_http" }).click();
    const question = row.getByRole("group", { name: "Remove toolset console_http and its tools?" });
    await question.getByRole("button", { name: "Keep" }).click();
    expect((await stage.system.request("/v1/toolsets/console_http")).status).toBe(200);
    await row.getByRole("button", { name: "Remove toolset console_http" }).click();
    await question.getByRole("button", { name: "Remove", exact: true }).click();
    await page.getByText("Removed toolset console_http and 1 tool.").waitFor();
    await row.waitFor({ state: "detached" });
    expect((await stage.system.request("/v1/toolsets/console_http")).status).toBe(404);
    expect((await stage.system.request("/v1/tools/console_report")).status).toBe(404);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows the API's validation error for a wrong field beside the form, with its path", async () => {
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    await open(page, "/admin/toolsets", "Registered toolsets");
    await page.getByLabel("Toolset name").fill("console_wrong");
    await page.getByLabel("Registration (JSON)").fill(
      JSON.stringify({
        kind: "mcp",
        name: "console_wrong",
        description: "A registration with a misspelt field",
        owner: "team-docs",
        url: mcp.url,
        updatez: "follow",
      }),
    );
    await page.getByRole("button", { name: "Register" }).click();
    const problem = page.locator("#register-problem").getByRole("alert");
    await problem.getByText("The request body is not valid.").waitFor();
    await problem.getByText("updatez", { exact: true }).waitFor();
    await problem.getByText(/unknown field/).waitFor();
    expect(await seriousFindings(page)).toEqual([]);
    expect(await page.getByLabel("Registration (JSON)").getAttribute("aria-invalid")).toBe("true");
    // Nothing was registered.
    expect((await stage.system.request("/v1/toolsets/console_wrong")).status).toBe(404);

    // Not JSON at all is said in the page, without asking the API.
    await page.getByLabel("Registration (JSON)").fill("{ kind: mcp");
    await page.getByRole("button", { name: "Register" }).click();
    await problem.getByText(/^That is not JSON/).waitFor();
    // The API's one refusal of the misspelt field, and nothing else.
    expectOnly(problems, ["400 PUT /v1/registered-toolsets/console_wrong"]);
    await page.context().close();
  });
});

describe("the audit log in the console", { timeout: 60_000 }, () => {
  it("lists a key's creation, newest first, and pages with the API's cursor", async () => {
    // More entries than a page holds, the last one the key to find.
    for (let index = 0; index < 50; index += 1) await stage.key(`audit-filler-${index}`, "viewer");
    await stage.key("audited-key", "member");

    const { page, problems } = await signedInPage(stage, stage.system.adminKey, {
      width: 390,
      height: 844,
    });
    await open(page, "/admin/audit", "Audit");
    const rows = page.getByRole("row");
    // The header, then the newest entry: the key made last.
    const newest = rows.nth(1);
    await newest.getByText("audited-key").waitFor();
    expect(await newest.getByText("POST /v1/keys").count()).toBe(1);
    expect(await newest.getByText("201").count()).toBe(1);
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await seriousFindings(page)).toEqual([]);

    await page.getByRole("link", { name: "Older entries" }).click();
    await page.getByRole("link", { name: "Newest entries" }).waitFor();
    expect(await page.getByText("audited-key").count()).toBe(0);
    expect(await rows.count()).toBeGreaterThan(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("fits the keys and toolsets pages in a 390 px wide window", async () => {
    const { page, problems } = await signedInPage(stage, stage.system.adminKey, {
      width: 390,
      height: 844,
    });
    await open(page, "/admin/keys", "Keys");
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await seriousFindings(page)).toEqual([]);
    await open(page, "/admin/toolsets", "Registered toolsets");
    expect(await horizontalOverflow(page)).toBe(0);
    expect(await seriousFindings(page)).toEqual([]);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("subscriptions in the console", { timeout: 60_000 }, () => {
  it("shows a member its own subscriptions and dead letters, and resumes and redrives one", async () => {
    const alice = await stage.key("sub-alice", "member");
    const bob = await stage.key("sub-bob", "member");
    const runId = stage.system.runId();
    const path = `/down/${runId}`;
    down.add(path);
    const subscribe = async (key: string, name: string, target: string) => {
      const response = await stage.system.request("/v1/subscriptions", {
        method: "POST",
        key,
        json: {
          name,
          pattern: { detail: { parentRunId: [runId] } },
          target: { kind: "webhook", url: `${receiver.origin}${target}` },
        },
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { subscription: { id: string } }).subscription.id;
    };
    const id = await subscribe(alice.key, "alice-results", path);
    await subscribe(bob.key, "bob-results", `/up/${runId}`);
    const called = await stage.system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "Hi there." }, wait: 10 },
    });
    expect(called.status).toBe(200);
    await stage.system.settle();
    const dead = async () =>
      (
        (await (
          await stage.system.request(`/v1/subscriptions/${id}/failures`, { key: alice.key })
        ).json()) as { failures: { eventKey: string }[] }
      ).failures;
    await expect.poll(async () => (await dead()).length, { timeout: 10_000 }).toBe(2);
    const [one] = (await dead()).map((letter) => letter.eventKey);

    const { page, problems } = await signedInPage(stage, alice.key);
    await page.getByRole("link", { name: "Subscriptions" }).click();
    await page.getByRole("heading", { level: 1, name: "Subscriptions" }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "alice-results" });
    await row.getByText("paused: failing").waitFor();
    // Only what the API shows a member: its own subscription, with no owner column.
    expect(await page.getByText("bob-results").count()).toBe(0);
    expect(await page.getByRole("columnheader", { name: "Owner" }).count()).toBe(0);

    await row.getByRole("link", { name: "Failures of alice-results" }).click();
    await page.getByRole("heading", { level: 2, name: "Failures of alice-results" }).waitFor();
    const letters = page.getByRole("table", { name: "Dead letters of alice-results" });
    await letters.getByText(one ?? "", { exact: true }).waitFor();
    expect(
      await letters.getByText("HTTP 500: the receiver answered 500: down for the test").count(),
    ).toBe(2);
    expect(await seriousFindings(page)).toEqual([]);

    // The receiver is back: resumed, then one dead letter sent again.
    down.delete(path);
    await page.getByRole("button", { name: "Resume subscription alice-results" }).click();
    await row.getByText("active", { exact: true }).waitFor();
    await page.getByRole("button", { name: `Redrive ${one}` }).click();
    await page.getByText("1 delivery sent again").waitFor();
    // The list is read again: the letter sent again has left it, the other stays.
    await letters.getByText(one ?? "", { exact: true }).waitFor({ state: "detached" });
    expect(await letters.getByRole("button", { name: /^Redrive / }).count()).toBe(1);
    const before = receiver.requests.filter((request) => request.url.pathname === path).length;
    await stage.system.toolbus.subscriptions.retryDue();
    expect(receiver.requests.filter((request) => request.url.pathname === path)).toHaveLength(
      before + 1,
    );
    expect((await dead()).map((letter) => letter.eventKey)).not.toContain(one);
    expect(problems).toEqual([]);
    await page.context().close();

    // An administrator sees every subscription, with its owner.
    const asAdmin = await signedInPage(stage, stage.system.adminKey);
    await open(asAdmin.page, "/admin/subscriptions", "Subscriptions");
    await asAdmin.page.getByText("bob-results", { exact: true }).waitFor();
    await asAdmin.page.getByRole("columnheader", { name: "Owner" }).waitFor();
    await asAdmin.page.context().close();
  });
});
