import { describe, expect, it } from "vitest";
import { deploymentFromEnv, environmentSecrets } from "./deployment";
import { ValidationError } from "./errors";

const env = (table: string): NodeJS.ProcessEnv => ({
  TOOLBUS_TABLE: table,
  TOOLBUS_BUS: `${table}-bus`,
  TOOLBUS_CONFIG: JSON.stringify({ stage: "unit" }),
});

describe("deploymentFromEnv", () => {
  it("reads an environment other than the process's afresh on every call", () => {
    expect(deploymentFromEnv(env("toolbus-one")).tableName).toBe("toolbus-one");
    expect(deploymentFromEnv(env("toolbus-two")).tableName).toBe("toolbus-two");
  });

  it("names every missing variable with its path", () => {
    const error = (() => {
      try {
        deploymentFromEnv({ TOOLBUS_BUS: "bus" });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).details).toContainEqual(
      expect.objectContaining({ path: "TOOLBUS_TABLE" }),
    );
  });

  it("names the subscriptions rule only where the environment does, and refuses a name EventBridge would", () => {
    expect(deploymentFromEnv(env("toolbus-one")).subscriptionsRule).toBeUndefined();
    const named = { ...env("toolbus-one"), TOOLBUS_SUBSCRIPTIONS_RULE: "subscriptions" };
    expect(deploymentFromEnv(named).subscriptionsRule).toBe("subscriptions");
    expect(() =>
      deploymentFromEnv({ ...env("toolbus-one"), TOOLBUS_SUBSCRIPTIONS_RULE: "no/slashes" }),
    ).toThrow(ValidationError);
  });
});

describe("the admin key", () => {
  it("is read at use, so a key bound after start-up (loaded on the first event) is seen", () => {
    const variables = env("toolbus-admin");
    const deployment = deploymentFromEnv(variables);
    expect(deployment.adminKey).toBeUndefined();
    variables.TOOLBUS_ADMIN_KEY = "a-key-of-at-least-24-characters";
    expect(deployment.adminKey).toBe("a-key-of-at-least-24-characters");
  });

  it("refuses a short key from the environment at once", () => {
    expect(() =>
      deploymentFromEnv({ ...env("toolbus-short"), TOOLBUS_ADMIN_KEY: "short" }),
    ).toThrow(ValidationError);
  });
});

describe("environmentSecrets", () => {
  it("reads the environment at use, so a value set later is seen", () => {
    const variables: NodeJS.ProcessEnv = {};
    const secret = environmentSecrets(variables);
    expect(secret("UNIT_TOKEN")).toBeUndefined();
    variables.UNIT_TOKEN = "set later";
    expect(secret("UNIT_TOKEN")).toBe("set later");
  });
});
