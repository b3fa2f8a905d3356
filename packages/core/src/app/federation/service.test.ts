import type { Principal } from "@toolbus/wire/model/call";
import { describe, expect, it } from "vitest";
import { UnavailableError, ValidationError } from "../../errors";
import { RemoteRefusal } from "../../registered/remote-refusal";
import { ToolFailure } from "../../tool-definition";
import type { SelectionService } from "../selection/service";
import {
  type FederatedServer,
  type RemoteMcpServers,
  ServerFederation,
  type ServerOfferings,
  templateMatches,
} from "./service";

const principal: Principal = { id: "key-1", role: "member" } as Principal;

/** Toolsets with one mcp tool each; `offered` are the ones selection offers the caller. */
function selectionOf(names: readonly string[], offered: readonly string[]) {
  const toolsets = names.map((name, index) => ({
    name,
    kind: "mcp",
    revision: 1,
    source: { url: `https://${name}.example/mcp`, renames: {} },
    index,
  }));
  const tools = names.map((name) => ({
    id: `${name}_tool`,
    toolset: name,
    implementation: { kind: "mcp", url: `https://${name}.example/mcp`, remoteName: "tool" },
  }));
  const select = async () => ({
    catalog: { toolsets, tools, version: "v1" },
    selection: { available: tools.filter((tool) => offered.includes(tool.toolset)) },
  });
  return { select } as unknown as Pick<SelectionService, "select">;
}

function offerings(partial: Partial<ServerOfferings>): ServerOfferings {
  return {
    capabilities: { prompts: true, resources: true, completions: false },
    prompts: [],
    resources: [],
    resourceTemplates: [],
    truncated: false,
    ...partial,
  };
}

function remoteOf(
  byToolset: Record<string, ServerOfferings | Error>,
  asked: string[] = [],
): RemoteMcpServers {
  const of = async (server: FederatedServer) => {
    asked.push(server.toolset);
    const answer = byToolset[server.toolset];
    if (!answer || answer instanceof Error) throw answer ?? new Error("no such server");
    return answer;
  };
  return {
    offerings: of,
    readResource: async (server, uri) => {
      if (uri.endsWith("/gone")) throw new RemoteRefusal(-32002, "gone", server.toolset);
      return { contents: [{ uri, text: server.toolset }], ttlMs: 5, resultType: "complete" };
    },
    getPrompt: async (server, name, args) => {
      if (args?.fail) throw new RemoteRefusal(-32602, "missing argument x", server.toolset);
      if (args?.down)
        throw new ToolFailure({
          kind: "timeout",
          message: "slow",
          retryable: true,
          recovery: "replan",
        });
      return {
        messages: [{ role: "user", content: { type: "text", text: `${server.toolset}:${name}` } }],
      };
    },
    complete: async (server) => ({ completion: { values: [server.toolset] } }),
  };
}

describe("ServerFederation", () => {
  it("merges the servers' lists, the toolset whose name sorts first keeping a clash", async () => {
    const federation = new ServerFederation({
      selection: selectionOf(["zeta", "alpha"], ["zeta", "alpha"]),
      remote: remoteOf({
        zeta: offerings({
          prompts: [{ name: "shared" }, { name: "z_only" }],
          resources: [{ uri: "a://x" }],
        }),
        alpha: offerings({
          prompts: [{ name: "shared", description: "alpha" }],
          resources: [{ uri: "a://x" }],
        }),
      }),
    });
    const prompts = await federation.prompts(principal, "default");
    expect(prompts.items).toEqual([{ name: "shared", description: "alpha" }, { name: "z_only" }]);
    expect(await federation.readResource(principal, "default", "a://x")).toEqual({
      contents: [{ uri: "a://x", text: "alpha" }],
    });
    const got = await federation.getPrompt(principal, "default", "z_only", undefined);
    expect(got).toMatchObject({ messages: [{ content: { text: "zeta:z_only" } }] });
  });

  it("leaves out toolsets the caller may not use, and unknown names are undefined", async () => {
    const asked: string[] = [];
    const federation = new ServerFederation({
      selection: selectionOf(["alpha", "hidden"], ["alpha"]),
      remote: remoteOf(
        { alpha: offerings({}), hidden: offerings({ prompts: [{ name: "secret" }] }) },
        asked,
      ),
    });
    expect((await federation.prompts(principal, "default")).items).toEqual([]);
    expect(await federation.getPrompt(principal, "default", "secret", undefined)).toBeUndefined();
    expect(asked).toEqual(["alpha"]);
  });

  it("names an unreachable server and a cut list, and still answers with the rest", async () => {
    const federation = new ServerFederation({
      selection: selectionOf(["alpha", "beta"], ["alpha", "beta"]),
      remote: remoteOf({
        alpha: new Error("connection refused"),
        beta: offerings({ resources: [{ uri: "b://1" }], truncated: true }),
      }),
    });
    const list = await federation.resources(principal, "default");
    expect(list).toEqual({
      items: [{ uri: "b://1" }],
      unreachable: ["alpha"],
      truncated: ["beta"],
    });
  });

  it("keeps a server's lists a short while, per toolset", async () => {
    let now = 0;
    const asked: string[] = [];
    const federation = new ServerFederation({
      selection: selectionOf(["alpha"], ["alpha"]),
      remote: remoteOf({ alpha: offerings({}) }, asked),
      listCacheMs: 1_000,
      now: () => now,
    });
    await federation.prompts(principal, "default");
    await federation.resources(principal, "default");
    expect(asked).toEqual(["alpha"]);
    now = 1_000;
    await federation.prompts(principal, "default");
    expect(asked).toEqual(["alpha", "alpha"]);
  });

  it("routes reads by template, a refusal as not found, and maps other failures", async () => {
    const federation = new ServerFederation({
      selection: selectionOf(["alpha"], ["alpha"]),
      remote: remoteOf({
        alpha: offerings({
          prompts: [{ name: "p" }],
          resourceTemplates: [{ uriTemplate: "a://items/{id}" }],
        }),
      }),
    });
    expect(await federation.readResource(principal, "default", "a://items/7")).toBeDefined();
    expect(await federation.readResource(principal, "default", "a://items/gone")).toBeUndefined();
    expect(await federation.readResource(principal, "default", "a://other/7")).toBeUndefined();
    await expect(
      federation.getPrompt(principal, "default", "p", { fail: "1" }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      federation.getPrompt(principal, "default", "p", { down: "1" }),
    ).rejects.toBeInstanceOf(UnavailableError);
    // No completions declared: an empty completion, not a call.
    expect(
      await federation.complete(principal, "default", {
        ref: { type: "ref/prompt", name: "p" },
        argument: { name: "a", value: "" },
      }),
    ).toEqual({ completion: { values: [], total: 0, hasMore: false } });
  });
});

describe("templateMatches", () => {
  it("matches RFC 6570 templates as MCP servers use them", () => {
    expect(templateMatches("test://template/{id}/data", "test://template/42/data")).toBe(true);
    expect(templateMatches("test://template/{id}/data", "test://template/4/2/data")).toBe(false);
    expect(templateMatches("file:///{+path}", "file:///a/b/c.txt")).toBe(true);
    expect(templateMatches("search://q{?term,page}", "search://q?term=x&page=2")).toBe(true);
    expect(templateMatches("a.b://{x}", "aXb://1")).toBe(false);
    expect(templateMatches("db://{table}-{id}", "db://users-42")).toBe(true);
  });

  it("stays linear on a server's template and a caller's URI built to make it backtrack", () => {
    // Eight adjacent expressions used to be eight competing groups: minutes on this input.
    const hostile = `x://${"a".repeat(2_000)}`;
    expect(templateMatches("x://{a}{b}{c}{d}{e}{f}{g}{h}!", hostile)).toBe(false);
    expect(templateMatches("x://{a}{b}", "x://ab")).toBe(true);
    // Segments separated by literals never compete for the same characters.
    expect(templateMatches("x://{a}-{b}-{c}-{d}!", `x://${"a-".repeat(900)}`)).toBe(false);
  });

  it("refuses templates and URIs past its bounds rather than matching them slowly", () => {
    expect(templateMatches("x://{+a}/y/{+b}", "x://1/y/2")).toBe(false);
    expect(
      templateMatches("x://{a}/{b}/{c}/{d}/{e}/{f}/{g}/{h}/{i}", "x://1/2/3/4/5/6/7/8/9"),
    ).toBe(false);
    expect(templateMatches("file:///{+path}", `file:///${"a".repeat(2_100)}`)).toBe(false);
  });
});
