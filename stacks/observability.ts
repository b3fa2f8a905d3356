import { Duration, type Stack } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import type { Api, Function as SstFunction } from "sst/constructs";

const FIVE_MINUTES = Duration.minutes(5);
/** A handler failing this share of its invocations in five minutes needs a person. */
export const HANDLER_ERROR_RATE_PERCENT = 5;

/*
 * Ratios guard their zero denominator with IF, not MAX([x, 1]): CloudWatch's MAX takes one time
 * series or an array of time series only, and an array holding the scalar 1 fails the deploy
 * ("Unsupported operand type(s) for MAX: '[Array[TimeSeries, Scalar]]'"). IF(condition, a, b)
 * is documented for a series condition with series or scalar branches and returns one series:
 * per timestamp it takes a where the condition is non-zero, b where it is zero, and has no data
 * point where the condition has none. So five minutes with no invocations stay missing data
 * (the alarm treats that as not breaching), and a period whose count is 0 reads 0%.
 * stacks/metric-math.ts checks these expressions offline (test/metric-math.test.ts).
 */

/** A handler's error rate in percent, over ids `errors` and `invocations`. */
export const HANDLER_ERROR_RATE_EXPRESSION = "IF(invocations > 0, 100 * errors / invocations, 0)";

/**
 * The cache hit ratio in percent, over ids `hits` and `misses`. The sum is parenthesised before
 * it is compared: the docs do not state the operators' precedence.
 */
export const CACHE_HIT_RATIO_EXPRESSION =
  "IF((hits + misses) > 0, 100 * hits / (hits + misses), 0)";

/** A call metric every tool's function writes (EMF, namespace Toolbus), summed over tools. */
export function callMetricExpression(stage: string, name: string, stat: string): string {
  return `SUM(SEARCH('{Toolbus,stage,toolId} MetricName="${name}" stage="${stage}"', '${stat}', 300))`;
}

/** A duration percentile, one series per tool. */
export function durationExpression(stage: string, stat: "p50" | "p99"): string {
  return `SEARCH('{Toolbus,stage,toolId} MetricName="duration" stage="${stage}"', '${stat}', 300)`;
}

function callMetric(stage: string, name: string, stat: string, label: string) {
  return new cloudwatch.MathExpression({
    expression: callMetricExpression(stage, name, stat),
    label,
    period: FIVE_MINUTES,
  });
}

function durationPercentile(stage: string, stat: "p50" | "p99") {
  return new cloudwatch.MathExpression({
    expression: durationExpression(stage, stat),
    label: `duration ${stat}`,
    period: FIVE_MINUTES,
  });
}

/**
 * How far behind the table's change stream a function it feeds may fall (the age of the last
 * record it was handed, Lambda's IteratorAge) before it alarms.
 */
export const BACKLOG_ALARM_SECONDS = 300;

/**
 * The stage's dashboard (calls, failures, p50 / p99 duration by tool, cache hit ratio, dead
 * letters, API 5xx) and the alarms that need a person: a dead letter, a handler failing more
 * than HANDLER_ERROR_RATE_PERCENT of its invocations, an API answering 5xx, a function fed by
 * the table's change stream falling behind it.
 */
export function addObservability(
  stack: Stack,
  props: {
    stage: string;
    api: Api;
    handlers: ReadonlyMap<string, SstFunction>;
    deadLetters: ReadonlyMap<string, sqs.Queue>;
    /**
     * Functions the table's change stream feeds (the stage stream's writer), by handler:
     * alarmed when their IteratorAge says they fall behind the stream.
     */
    streamConsumers?: ReadonlyMap<string, SstFunction>;
  },
): { dashboard: cloudwatch.Dashboard; alarms: cloudwatch.Alarm[] } {
  const { stage, api, handlers, deadLetters } = props;
  const alarms: cloudwatch.Alarm[] = [];
  for (const [handler, fn] of props.streamConsumers ?? []) {
    alarms.push(
      new cloudwatch.Alarm(stack, `Backlog${alarms.length}Alarm`, {
        alarmDescription: `Toolbus ${stage}: ${handler} is more than ${BACKLOG_ALARM_SECONDS / 60} minutes behind the table's change stream`,
        // Milliseconds: the age of the newest record of the last batch Lambda handed over.
        metric: fn.metric("IteratorAge", { statistic: "Maximum", period: FIVE_MINUTES }),
        threshold: BACKLOG_ALARM_SECONDS * 1000,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  for (const [handler, queue] of deadLetters) {
    alarms.push(
      new cloudwatch.Alarm(stack, `DeadLetters${alarms.length}Alarm`, {
        alarmDescription: `Toolbus ${stage}: ${handler} has dead letters (GET the failures, redrive)`,
        metric: queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  for (const [handler, fn] of handlers) {
    const rate = new cloudwatch.MathExpression({
      expression: HANDLER_ERROR_RATE_EXPRESSION,
      usingMetrics: {
        errors: fn.metricErrors({ period: FIVE_MINUTES }),
        invocations: fn.metricInvocations({ period: FIVE_MINUTES }),
      },
      label: `${handler} error rate (%)`,
      period: FIVE_MINUTES,
    });
    alarms.push(
      new cloudwatch.Alarm(stack, `HandlerErrors${alarms.length}Alarm`, {
        alarmDescription: `Toolbus ${stage}: ${handler} fails over ${HANDLER_ERROR_RATE_PERCENT}% of its invocations`,
        metric: rate,
        threshold: HANDLER_ERROR_RATE_PERCENT,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
  }
  const serverErrors = api.cdk.httpApi.metricServerError({ period: FIVE_MINUTES });
  alarms.push(
    new cloudwatch.Alarm(stack, "Api5xxAlarm", {
      alarmDescription: `Toolbus ${stage}: the API answered 5xx`,
      metric: serverErrors,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    }),
  );

  const dashboard = new cloudwatch.Dashboard(stack, "Dashboard", {
    dashboardName: `toolbus-${stage}`,
    widgets: [
      [
        new cloudwatch.GraphWidget({
          title: "Calls and failures",
          left: [
            callMetric(stage, "calls", "Sum", "calls"),
            callMetric(stage, "failed", "Sum", "failed"),
            callMetric(stage, "rateLimited", "Sum", "rate limited"),
          ],
        }),
        new cloudwatch.GraphWidget({
          title: "Duration by tool (ms)",
          left: [durationPercentile(stage, "p50"), durationPercentile(stage, "p99")],
        }),
        new cloudwatch.GraphWidget({
          title: "Cache hit ratio (%)",
          left: [
            new cloudwatch.MathExpression({
              expression: CACHE_HIT_RATIO_EXPRESSION,
              usingMetrics: {
                hits: callMetric(stage, "cacheHits", "Sum", "hits"),
                misses: callMetric(stage, "cacheMisses", "Sum", "misses"),
              },
              label: "cache hit ratio",
              period: FIVE_MINUTES,
            }),
          ],
        }),
      ],
      [
        new cloudwatch.GraphWidget({
          title: "Dead letters",
          left: [...deadLetters.values()].map((queue) =>
            queue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES }),
          ),
        }),
        new cloudwatch.GraphWidget({ title: "API 5xx", left: [serverErrors] }),
        new cloudwatch.AlarmStatusWidget({ title: "Alarms", alarms }),
      ],
    ],
  });
  return { dashboard, alarms };
}
