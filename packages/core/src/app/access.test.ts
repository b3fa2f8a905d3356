import { describe, expect, it } from "vitest";
import { parseStageConfig } from "../config";
import { ValidationError } from "../errors";
import {
  hasPermission,
  highestRole,
  isKnownRole,
  mayActAs,
  mayActFor,
  mayActForOthers,
  requiredRole,
  requireKnownRole,
  roleAtLeast,
} from "./access";

const config = parseStageConfig({
  roles: ["guest", "dev", "ops"],
  permissions: { read: "guest", call: "dev", admin: "ops" },
});

describe("access", () => {
  it("orders roles as configured", () => {
    expect(roleAtLeast(config, "ops", "dev")).toBe(true);
    expect(roleAtLeast(config, "guest", "dev")).toBe(false);
    expect(roleAtLeast(config, "stranger", "guest")).toBe(false);
    // An unknown minimum closes rather than opens.
    expect(roleAtLeast(config, "ops", "root")).toBe(false);
  });

  it("knows the stage's roles and refuses others with a 400 naming them", () => {
    expect(isKnownRole(config, "dev")).toBe(true);
    expect(isKnownRole(config, "admin")).toBe(false);
    expect(() => requireKnownRole(config, "dev")).not.toThrow();
    const refused = (() => {
      try {
        requireKnownRole(config, "admin", "agent.role");
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(ValidationError);
    expect(refused).toMatchObject({
      message: "Unknown role admin.",
      details: [{ path: "agent.role", message: "One of: guest, dev, ops." }],
    });
  });

  it("grants a permission from its role upwards, with the fallbacks for subscribe and approve", () => {
    expect(requiredRole(config, "read")).toBe("guest");
    expect(requiredRole(config, "subscribe")).toBe("dev");
    expect(requiredRole(config, "approve")).toBe("ops");
    expect(hasPermission(config, { role: "dev" }, "call")).toBe(true);
    expect(hasPermission(config, { role: "guest" }, "call")).toBe(false);
    expect(hasPermission(config, { role: "stranger" }, "read")).toBe(false);
  });

  it("gives the bootstrap admin the top role", () => {
    expect(highestRole(config)).toBe("ops");
  });

  it("lets a principal act as its own role or a lower one, never a higher one", () => {
    expect(mayActAs(config, { role: "dev" }, "dev")).toBe(true);
    expect(mayActAs(config, { role: "dev" }, "guest")).toBe(true);
    expect(mayActAs(config, { role: "dev" }, "ops")).toBe(false);
    // A role the stage no longer lists still sees its own view, and only that.
    expect(mayActAs(config, { role: "retired" }, "retired")).toBe(true);
    expect(mayActAs(config, { role: "retired" }, "guest")).toBe(false);
  });

  it("lets a principal act for itself, and administrators for anyone", () => {
    const dev = { id: "k1", role: "dev" };
    expect(mayActFor(config, dev, { id: "k1" })).toBe(true);
    expect(mayActFor(config, dev, { id: "k2" })).toBe(false);
    expect(mayActForOthers(config, dev)).toBe(false);
    expect(mayActFor(config, { id: "k3", role: "ops" }, { id: "k2" })).toBe(true);
  });
});
