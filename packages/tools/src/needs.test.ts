import { createHttpClient } from "@toolbus/core/outbound";
import { toolSpecOf } from "@toolbus/core/tool-definition";
import { describe, expect, it } from "vitest";
import { builtinTools } from "./builtin";
import { builtinCapabilities } from "./capabilities";

/*
 * A tool's function is built from its definition's `needs` alone (core's toolEntry), and the
 * stack binds secrets and grants from its spec: the two must say the same thing.
 */

const secretsOf = (tool: (typeof builtinTools)[number]) =>
  toolSpecOf(tool).setup.flatMap((field) => (field.secret ? [field.secret] : []));

describe.each(builtinTools.map((tool) => [tool.spec.id, tool] as const))("%s needs", (id, tool) => {
  const spec = toolSpecOf(tool);
  const needs = tool.needs;

  it("are declared, so the tool has a function of its own", () => {
    expect(needs).toBeDefined();
  });

  it("detect every capability its spec requires, and otherwise only the one named after it", () => {
    const names = (needs?.detectors ?? []).map((detector) => detector.name);
    expect(names.filter((name) => name !== id).sort()).toEqual([...spec.requires].sort());
    expect(new Set(names).size).toBe(names.length);
  });

  it("use the detectors the stage reports on, so selection and the function agree", () => {
    for (const detector of needs?.detectors ?? []) {
      expect(builtinCapabilities).toContain(detector);
    }
  });

  it("reach the network through the guarded client exactly when the spec requires network", () => {
    expect(needs?.network).toBe(spec.requires.includes("network") ? createHttpClient : undefined);
  });

  it("load bound secrets exactly when the spec's setup names one", () => {
    expect(needs?.secrets !== undefined).toBe(secretsOf(tool).length > 0);
  });

  it("carry the fallback the spec names", () => {
    expect(needs?.fallback?.spec.id).toBe(spec.fallback);
    if (needs?.fallback) expect(builtinTools).toContain(needs.fallback);
  });
});
