import {
  DescribeRuleCommand,
  DisableRuleCommand,
  EnableRuleCommand,
  type EventBridgeClient,
} from "@aws-sdk/client-eventbridge";
import type { RuleSwitch } from "../ports";

/**
 * One rule of the stage's bus, switched on and off through EventBridge's control plane
 * (DescribeRule, EnableRule, DisableRule: not billed per event). The same calls reach the
 * local bus under `npm start` and in tests.
 */
export function eventBridgeRuleSwitch(options: {
  client: EventBridgeClient;
  busName: string;
  ruleName: string;
}): RuleSwitch {
  const { client, busName, ruleName } = options;
  const rule = { Name: ruleName, EventBusName: busName };
  return {
    async enabled() {
      const { State } = await client.send(new DescribeRuleCommand(rule));
      // ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS is on too.
      return State?.startsWith("ENABLED") ?? false;
    },
    async enable() {
      await client.send(new EnableRuleCommand(rule));
    },
    async disable() {
      await client.send(new DisableRuleCommand(rule));
    },
  };
}
