import { describe, expect, it } from "vitest";
import { z } from "zod";
import { requiredRole } from "./app/access";
import { checkToolSettings, loadStageConfig, parseStageConfig } from "./config";
import { ValidationError } from "./errors";

describe("stage configuration", () => {
  it("fills defaults: three roles, one default mode, a capped wait", () => {
    const config = parseStageConfig({});
    expect(config.roles).toEqual(["viewer", "member", "admin"]);
    expect(config.modes).toEqual({ default: "default", available: ["default"] });
    expect(config.calls.maxWaitSeconds).toBe(25);
  });

  it("rejects permissions that name an unknown role, and a default mode that is not available", () => {
    expect(() =>
      parseStageConfig({ permissions: { read: "x", call: "member", admin: "admin" } }),
    ).toThrow(/permissions\.read: "x" is not one of roles \(viewer, member, admin\)/);
    expect(() => parseStageConfig({ modes: { default: "plan", available: ["build"] } })).toThrow(
      ValidationError,
    );
  });

  it("lets subscribing take the call role unless the stage names another, which must be a role", () => {
    expect(requiredRole(parseStageConfig({}), "subscribe")).toBe("member");
    const adminsOnly = parseStageConfig({
      permissions: { read: "viewer", call: "member", admin: "admin", subscribe: "admin" },
    });
    expect(requiredRole(adminsOnly, "subscribe")).toBe("admin");
    expect(() =>
      parseStageConfig({
        permissions: { read: "viewer", call: "member", admin: "admin", subscribe: "root" },
      }),
    ).toThrow(/permissions\.subscribe: "root" is not one of roles/);
    // Deciding approvals falls back to the admin role; approval rules name known roles.
    expect(requiredRole(parseStageConfig({}), "approve")).toBe("admin");
    expect(() =>
      parseStageConfig({ approvals: { rules: [{ tools: ["web_search"], roles: ["intern"] }] } }),
    ).toThrow(/approvals\.rules\.0\.roles: "intern" is not one of roles/);
    expect(() => parseStageConfig({ approvals: { rules: [{ roles: ["member"] }] } })).toThrow(
      /a rule names tools, toolsets, or writes: true/,
    );
    expect(() => parseStageConfig({ runs: { policy: { maxCalls: 0 } } })).toThrow(
      /runs\.policy\.maxCalls/,
    );
    expect(() => parseStageConfig({ runs: { policy: { maxCals: 5 } } })).toThrow(/maxCals/);
    expect(parseStageConfig({}).subscriptions).toEqual({
      retryWindowHours: 24,
      pauseAfterFailures: 100,
      maxPerOwner: 100,
      allowTargets: [],
    });
    expect(() => parseStageConfig({ subscriptions: { retryWindowHour: 1 } })).toThrow(
      /retryWindowHour/,
    );
  });

  it("reads JSON from TOOLBUS_CONFIG and says so when it is not JSON", () => {
    expect(loadStageConfig({ TOOLBUS_CONFIG: '{"stage":"prod"}' }).stage).toBe("prod");
    expect(() => loadStageConfig({ TOOLBUS_CONFIG: "{nope" })).toThrow(/not valid JSON/);
  });

  it("lists every problem by path, with the known key a typo was probably meant to be", () => {
    let error: unknown;
    try {
      parseStageConfig({
        calls: { defaultWaitSeconds: 100 },
        outbond: { allowHosts: [] },
        outbound: { networkEnabeld: false },
        permissions: { read: "viewer", call: "member", admin: "admin", invoke: "member" },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const message = (error as Error).message;
    expect(message).toContain("The stage configuration is not valid:");
    expect(message).toMatch(/calls\.defaultWaitSeconds: .*60/);
    expect(message).toContain('outbond: unknown field; did you mean "outbound"?');
    expect(message).toContain(
      'outbound.networkEnabeld: unknown field; did you mean "networkEnabled"?',
    );
    // Nothing near enough: named, with no guess.
    expect(message).toContain("permissions.invoke: unknown field\n");
    expect((error as ValidationError).details).toHaveLength(4);
  });

  it("takes an outbound proxy as an http URL with noProxy, or false, and refuses anything else", () => {
    expect(parseStageConfig({}).outbound.proxy).toBeUndefined();
    expect(
      parseStageConfig({ outbound: { proxy: { url: "http://user:pw@proxy.corp:3128" } } }).outbound
        .proxy,
    ).toEqual({ url: "http://user:pw@proxy.corp:3128", noProxy: [] });
    expect(parseStageConfig({ outbound: { proxy: false } }).outbound.proxy).toBe(false);
    const problems = (proxy: unknown) => {
      try {
        parseStageConfig({ outbound: { proxy } });
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    };
    for (const url of ["https://proxy.corp:3128", "proxy.corp:3128", "http://proxy.corp/path"]) {
      expect(problems({ url }), url).toContain(
        "outbound.proxy.url: expected http://[user:password@]host[:port]",
      );
    }
    expect(problems({ url: "http://proxy.corp:3128", noProxi: [] })).toContain(
      'outbound.proxy.noProxi: unknown field; did you mean "noProxy"?',
    );
  });

  it("refuses settings for a tool that does not exist, or that its tool refuses", () => {
    const tools = new Map([
      ["static_links", { settings: z.strictObject({ links: z.array(z.string()) }) }],
    ]);
    expect(() =>
      checkToolSettings(parseStageConfig({ tools: { static_link: { links: [] } } }), tools),
    ).toThrow('tools.static_link: no such tool; did you mean "static_links"?');
    expect(() =>
      checkToolSettings(parseStageConfig({ tools: { static_links: { link: [] } } }), tools),
    ).toThrow(/tools\.static_links\.link: unknown field; did you mean "links"\?/);
    expect(() =>
      checkToolSettings(parseStageConfig({ tools: { static_links: { links: ["a"] } } }), tools),
    ).not.toThrow();
  });
});

describe("auth.oauth and the console's client", () => {
  const oauth = {
    issuer: "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_pool",
    resource: "https://toolbus.example.com/mcp",
    roles: { claim: "cognito:groups", map: { members: "member" } },
  };

  it("refuses a consoleClientId that clientIds does not accept, whose tokens would all be refused", () => {
    expect(() =>
      parseStageConfig({
        auth: { oauth: { ...oauth, clientIds: ["agents"], consoleClientId: "console" } },
      }),
    ).toThrow(/auth\.oauth\.consoleClientId: "console" is not one of clientIds/);
    expect(
      parseStageConfig({
        auth: { oauth: { ...oauth, clientIds: ["agents", "console"], consoleClientId: "console" } },
      }).auth?.oauth?.consoleClientId,
    ).toBe("console");
    // Without clientIds, tokens are checked by audience: any console client may be named.
    expect(() =>
      parseStageConfig({ auth: { oauth: { ...oauth, consoleClientId: "console" } } }),
    ).not.toThrow();
  });

  it("takes a console token endpoint on another origin only as a secure URL", () => {
    const tokenEndpoint = "https://toolbus.auth.eu-west-1.amazoncognito.com/oauth2/token";
    expect(
      parseStageConfig({
        auth: {
          oauth: { ...oauth, consoleClientId: "console", consoleTokenEndpoint: tokenEndpoint },
        },
      }).auth?.oauth?.consoleTokenEndpoint,
    ).toBe(tokenEndpoint);
    expect(() =>
      parseStageConfig({
        auth: {
          oauth: {
            ...oauth,
            consoleClientId: "console",
            consoleTokenEndpoint: "http://toolbus.auth.eu-west-1.amazoncognito.com/oauth2/token",
          },
        },
      }),
    ).toThrow(/consoleTokenEndpoint/);
  });
});
