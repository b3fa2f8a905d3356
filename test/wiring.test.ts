import {
  ListRulesCommand,
  ListTargetsByRuleCommand,
  PutEventsCommand,
} from "@aws-sdk/client-eventbridge";
import { busRules, EVENT_SOURCE, fedByBus } from "@toolbus/core";
import { describe, expect, it } from "vitest";
import { LocalEventBus, localEventBridgeClient } from "../packages/local/src/bus";
import { applyWiring, localFunctionName } from "../packages/local/src/runtime/wiring";
import { compilePattern } from "../packages/pattern/src";

const envelope = (detailType: string, toolId: string) => ({
  version: "0",
  id: "e1",
  "detail-type": detailType,
  source: EVENT_SOURCE,
  account: "000000000000",
  time: "2026-11-21T10:00:00Z",
  region: "us-east-1",
  resources: [],
  detail: { toolId, parentRunId: "run-1" },
});

describe("the wiring table", () => {
  it("has one rule per built-in tool, one per registered kind, the recorder, the subscriptions and the stream", () => {
    const rules = busRules(["web_search", "static_links"]);
    expect(rules.map((r) => [r.name, r.handler])).toEqual([
      ["tool-static_links", "tools/static_links"],
      ["tool-web_search", "tools/web_search"],
      ["registered-http", "registered/http"],
      ["registered-mcp", "registered/mcp"],
      ["recorder", "recorder"],
      ["subscriptions", "subscriptions"],
      ["stream", "stream"],
    ]);
  });

  it("routes a registered tool's call by its implementation kind, not its id", () => {
    const rules = busRules(["web_search"]);
    const scheduled = (implementation: string) => ({
      ...envelope("ToolCallScheduled", "acme_get_item"),
      detail: { toolId: "acme_get_item", implementation, parentRunId: "run-1" },
    });
    const matching = (event: object) =>
      rules.filter((rule) => compilePattern(rule.pattern).matches(event)).map((r) => r.name);
    expect(matching(scheduled("http"))).toEqual([
      "registered-http",
      "recorder",
      "subscriptions",
      "stream",
    ]);
    expect(matching(scheduled("mcp"))).toEqual([
      "registered-mcp",
      "recorder",
      "subscriptions",
      "stream",
    ]);
    expect(matching(scheduled("builtin"))).toEqual(["recorder", "subscriptions", "stream"]);
  });

  it("routes a scheduled call only to its tool's rule, the recorder, the subscriptions and the stream", () => {
    const rules = busRules(["web_search", "static_links"]);
    const matching = (event: object) =>
      rules.filter((rule) => compilePattern(rule.pattern).matches(event)).map((r) => r.name);
    expect(matching(envelope("ToolCallScheduled", "web_search"))).toEqual([
      "tool-web_search",
      "recorder",
      "subscriptions",
      "stream",
    ]);
    expect(matching(envelope("ToolResultReceived", "web_search"))).toEqual([
      "recorder",
      "subscriptions",
      "stream",
    ]);
    expect(matching({ ...envelope("ToolCallScheduled", "web_search"), source: "other" })).toEqual(
      [],
    );
  });

  it("refuses tool ids that are not snake_case or appear twice", () => {
    expect(() => busRules(["Web-Search"])).toThrow(/snake_case/);
    expect(() => busRules(["a_tool", "a_tool"])).toThrow(/a_tool twice/);
  });
});

describe("the local runtime's wiring", () => {
  it("registers exactly the rules a deployed bus has, and their targets, on the local bus", async () => {
    const bus = new LocalEventBus();
    const client = localEventBridgeClient({ bus });
    const rules = busRules(["readability_analyzer", "static_links"]);
    const seen: Array<[string, unknown]> = [];
    const handlers = Object.fromEntries(
      rules.map((rule) => [
        rule.handler,
        (event: unknown) => void seen.push([rule.handler, event]),
      ]),
    );
    await applyWiring({ bus, client, busName: "toolbus-test", rules, handlers });

    // The stream's rule is fed by the run logs: locally their only writer puts its chunks.
    const busFed = rules.filter(fedByBus);
    expect(rules.filter((rule) => !fedByBus(rule)).map((rule) => rule.handler)).toEqual(["stream"]);
    const listed = await client.send(new ListRulesCommand({ EventBusName: "toolbus-test" }));
    expect(
      listed.Rules?.map((r) => ({ name: r.Name, pattern: JSON.parse(r.EventPattern ?? "") })),
    ).toEqual(
      [...busFed]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((r) => ({ name: r.name, pattern: r.pattern })),
    );
    for (const rule of busFed) {
      const targets = await client.send(
        new ListTargetsByRuleCommand({ Rule: rule.name, EventBusName: "toolbus-test" }),
      );
      expect(targets.Targets?.map((t) => t.Arn)).toEqual([
        bus.functionArn(localFunctionName(rule.handler)),
      ]);
    }

    await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: "toolbus-test",
            Source: EVENT_SOURCE,
            DetailType: "ToolCallScheduled",
            Detail: JSON.stringify({ toolId: "static_links", parentRunId: "run-1" }),
          },
        ],
      }),
    );
    await bus.drain();
    bus.close();
    expect(seen.map(([handler]) => handler).sort()).toEqual([
      "recorder",
      "subscriptions",
      "tools/static_links",
    ]);
  });

  it("refuses to wire a rule whose handler is missing", async () => {
    const bus = new LocalEventBus();
    const client = localEventBridgeClient({ bus });
    const wiring = applyWiring({
      bus,
      client,
      busName: "toolbus-test",
      rules: busRules(["static_links"]),
      handlers: { recorder: () => undefined },
    });
    await expect(wiring).rejects.toThrow(/No local handler for: tools\/static_links/);
    bus.close();
  });
});
