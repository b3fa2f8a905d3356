import {
  createToolbusClient,
  type ReviewDecision,
  ToolbusClientError,
  type ToolsetReview,
} from "@toolbus/client";
import { type ApiServer, serveApi } from "@toolbus/local";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { runToolbusCli } from "./support/cli";
import { type McpUpstream, startMcpUpstream, textTool } from "./support/mcp-upstream";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Reviewing a registered MCP server's changed tools from the command line, against the real
// system and a real MCP server on loopback: a refresh holds what the server changed, `toolsets
// review` shows it field by field, `accept` serves it and `reject` keeps the pinned definition.

const searchDocs = (description: string) =>
  textTool("searchDocs", description, "found", { q: { type: "string" } });
const radar = textTool("radar", "The latest radar picture.", "clear");

let mcp: McpUpstream;
let system: TestToolbus;
let server: ApiServer;

beforeAll(async () => {
  mcp = await startMcpUpstream([searchDocs("Searches the docs.")]);
  system = await startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } });
  server = await serveApi(system.app, { port: 0 });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await system?.stop();
  await mcp?.close();
});

const toolbus = (argv: string[]) => runToolbusCli(server.url, argv, system.adminKey);
const client = () => createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });

async function register(name: string, renames: Record<string, string> = {}): Promise<void> {
  await client().toolsets.register({
    kind: "mcp",
    name,
    description: "The docs team's MCP server",
    owner: "team-docs",
    url: mcp.url,
    renames,
  });
}

/** The description the catalog serves for a tool now. */
async function served(id: string): Promise<string> {
  return (await client().tools.get(id)).description;
}

describe("toolbus toolsets review, accept and reject", { timeout: 90_000 }, () => {
  it("holds a changed description on refresh and names the command that shows it", async () => {
    await register("cli_docs");
    mcp.setTools([searchDocs("Searches the docs, by section."), radar]);

    const run = await toolbus(["toolsets", "refresh", "cli_docs"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      "2 changes held for review (changed search_docs; added radar): toolbus toolsets review cli_docs\n",
    );
    expect(await served("search_docs")).toBe("Searches the docs.");
  });

  it("shows each pending change with its fields from the pin to the server's", async () => {
    const run = await toolbus(["toolsets", "review", "cli_docs"]);
    expect(run.code).toBe(0);
    const { revision } = await client().toolsets.review("cli_docs");
    expect(run.stdout).toMatch(
      new RegExp(`^Toolset cli_docs \\(updates: review, revision ${revision}\\): 2 pending`),
    );
    expect(run.stdout).toMatch(/^added {4}radar {2}\(server: "radar", held since \S+Z\)$/m);
    expect(run.stdout).toMatch(
      /^changed {2}search_docs {2}\(server: "searchDocs", held since \S+Z\)\n {2}\/description: "Searches the docs\." → "Searches the docs, by section\."\n/m,
    );
    expect(run.stdout).toContain(`--revision ${revision}`);

    const asJson = await toolbus(["toolsets", "review", "cli_docs", "--json"]);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      toolset: "cli_docs",
      pending: [
        { id: "radar", change: "added" },
        {
          id: "search_docs",
          change: "changed",
          fields: [
            {
              path: "/description",
              before: "Searches the docs.",
              after: "Searches the docs, by section.",
            },
          ],
        },
      ],
      rejected: [],
    });
  });

  it("serves only the changes --tools names on accept, leaving the others pending", async () => {
    const { revision } = await client().toolsets.review("cli_docs");
    const run = await toolbus([
      "toolsets",
      "accept",
      "cli_docs",
      "--tools",
      "search_docs",
      "--revision",
      String(revision),
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^Accepted 1 change of toolset cli_docs: search_docs\. 1 still pending \(revision \d+\)\.\n$/,
    );
    expect(await served("search_docs")).toBe("Searches the docs, by section.");
  });

  it("refuses a decision against a revision a write has moved past", async () => {
    const { revision } = await client().toolsets.review("cli_docs");
    const run = await toolbus([
      "toolsets",
      "accept",
      "cli_docs",
      "--revision",
      String(revision - 1),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/\[409 \w+\]$/m);
  });

  it("keeps the pinned definition on reject and does not hold the same change again", async () => {
    mcp.setTools([searchDocs("Searches everything."), radar]);
    await client().toolsets.refresh("cli_docs");

    const run = await toolbus(["toolsets", "reject", "cli_docs"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^Rejected 2 changes of toolset cli_docs: radar, search_docs\. 0 still pending/,
    );
    expect(await served("search_docs")).toBe("Searches the docs, by section.");

    const review = await toolbus(["toolsets", "review", "cli_docs"]);
    expect(review.stdout).toMatch(/: 0 pending, 2 rejected\.\n\nRejected:\n/);
    expect(review.stdout).toMatch(
      /^changed {2}search_docs {2}\(server: "searchDocs", found \S+Z, rejected\)$/m,
    );

    const again = await toolbus(["toolsets", "refresh", "cli_docs"]);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain("held for review");
  });

  it("exits 1 naming a tool id with no pending change", async () => {
    mcp.setTools([searchDocs("Searches the docs, by page."), radar]);
    await client().toolsets.refresh("cli_docs");
    const run = await toolbus(["toolsets", "accept", "cli_docs", "--tools", "no_such_tool"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no_such_tool.*\[400 invalid_request\]$/m);
  });
});

describe("the typed client's toolsets.review, accept and reject", { timeout: 90_000 }, () => {
  it("reads the review and decides it, typed, sending If-Match as the toolset revision", async () => {
    mcp.setTools([searchDocs("Searches the docs.")]);
    // The same server under a second name: its tool needs an id of its own here.
    await register("client_docs", { searchDocs: "client_search_docs" });
    mcp.setTools([searchDocs("Finds pages in the docs.")]);
    const refreshed = await client().toolsets.refresh("client_docs");
    expect(refreshed.held).toEqual({ added: [], changed: ["client_search_docs"], removed: [] });

    const review = await client().toolsets.review("client_docs");
    expectTypeOf(review).toEqualTypeOf<ToolsetReview>();
    expect(review.pending.map((change) => change.id)).toEqual(["client_search_docs"]);

    const stale = await client()
      .toolsets.reject("client_docs", { ifMatch: review.revision - 1 })
      .catch((error: unknown) => error);
    expect(stale).toBeInstanceOf(ToolbusClientError);
    expect(stale).toMatchObject({ status: 409 });

    const accepted = await client().toolsets.accept("client_docs", {
      tools: ["client_search_docs"],
      ifMatch: review.revision,
    });
    expectTypeOf(accepted).toEqualTypeOf<ReviewDecision>();
    expect(accepted.decided).toEqual(["client_search_docs"]);
    expect(accepted.review.pending).toEqual([]);
    expect(await served("client_search_docs")).toBe("Finds pages in the docs.");
  });
});
