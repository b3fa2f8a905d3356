import { describe, expect, it } from "vitest";
import type { HttpClient } from "./outbound/types";
import { testDetector as detector, testTool as tool } from "./testing";
import { toolScope } from "./tool-definition";

const network = detector("network");
const serving = detector("backup");
const client = (): HttpClient => ({ request: async () => ({}) as never });
const loadSecrets = async () => undefined;

describe("toolScope", () => {
  it("joins a tool's declaration with its fallback's, which runs in the same function", () => {
    const backup = tool("backup", { detectors: [serving], secrets: loadSecrets });
    const primary = tool("primary", { detectors: [network], fallback: backup, network: client });
    expect(toolScope(primary.needs)).toEqual({
      capabilities: [network, serving],
      fallbacks: [backup],
      network: client,
      secrets: loadSecrets,
    });
  });

  it("gives a tool without a fallback only what it declares", () => {
    expect(toolScope(tool("alone", { detectors: [network] }).needs)).toEqual({
      capabilities: [network],
      fallbacks: [],
      network: undefined,
      secrets: undefined,
    });
  });
});
