import type { Stack } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as actions from "aws-cdk-lib/aws-cloudwatch-actions";
import * as sns from "aws-cdk-lib/aws-sns";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import type { StackConfig } from "./config";

/**
 * Where a stage's alarms tell a person (`alarms` in its stack config): a topic of the stage's
 * own with e-mail subscriptions, or a topic the team already has (its ARN: a pager, a chat
 * bridge). Both the alarm and its recovery are sent, so a page can resolve itself. A stage that
 * says `nobody` has alarms that only change state on the dashboard.
 */
export function notifyAlarms(
  stack: Stack,
  stage: string,
  alarms: readonly cloudwatch.Alarm[],
  config: StackConfig["alarms"],
): sns.ITopic | undefined {
  if ("nobody" in config) return undefined;
  const topic =
    "topicArn" in config
      ? sns.Topic.fromTopicArn(stack, "AlarmTopic", config.topicArn)
      : new sns.Topic(stack, "AlarmTopic", {
          topicName: `toolbus-${stage}-alarms`,
          displayName: `Toolbus ${stage} alarms`,
          // CloudWatch publishes over HTTPS; nobody may publish to it in the clear.
          enforceSSL: true,
        });
  // An imported topic is someone else's: its subscriptions are theirs to manage.
  if ("emails" in config) {
    for (const email of config.emails)
      topic.addSubscription(new subscriptions.EmailSubscription(email));
  }
  const action = new actions.SnsAction(topic);
  for (const alarm of alarms) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
  return topic;
}
