import { describe, expect, it } from "vitest";
import { loadStageConfig, parseStageConfig, roleAtLeast } from "./config";
import { ValidationError } from "./errors";

describe("stage configuration", () => {
  it("fills defaults: three roles, one default mode, a capped wait", () => {
    const config = parseStageConfig({});
    expect(config.roles).toEqual(["viewer", "member", "admin"]);
    expect(config.modes).toEqual({ default: "default", available: ["default"] });
    expect(config.calls.maxWaitSeconds).toBe(25);
  });

  it("orders roles as configured", () => {
    const config = parseStageConfig({
      roles: ["guest", "dev", "ops"],
      permissions: { read: "guest", call: "dev", admin: "ops" },
    });
    expect(roleAtLeast(config, "ops", "dev")).toBe(true);
    expect(roleAtLeast(config, "guest", "dev")).toBe(false);
    expect(roleAtLeast(config, "stranger", "guest")).toBe(false);
  });

  it("rejects permissions that name an unknown role, and a default mode that is not available", () => {
    expect(() =>
      parseStageConfig({ permissions: { read: "x", call: "member", admin: "admin" } }),
    ).toThrow(/unknown role: x/);
    expect(() => parseStageConfig({ modes: { default: "plan", available: ["build"] } })).toThrow(
      ValidationError,
    );
  });

  it("reads JSON from TOOLBUS_CONFIG and says so when it is not JSON", () => {
    expect(loadStageConfig({ TOOLBUS_CONFIG: '{"stage":"prod"}' }).stage).toBe("prod");
    expect(() => loadStageConfig({ TOOLBUS_CONFIG: "{nope" })).toThrow(/not valid JSON/);
  });
});
