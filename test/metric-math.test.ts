import { App, Duration, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkMetricMath, metricMathProblems } from "../stacks/metric-math";
import {
  CACHE_HIT_RATIO_EXPRESSION,
  callMetricExpression,
  durationExpression,
  HANDLER_ERROR_RATE_EXPRESSION,
} from "../stacks/observability";

const BROKEN_ERROR_RATE = "100 * errors / MAX([invocations, 1])";
const ids = (...timeSeries: string[]) => ({ timeSeries });

describe("checkMetricMath accepts what stacks/observability.ts deploys", () => {
  it("accepts the handler error rate over errors and invocations", () => {
    expect(checkMetricMath(HANDLER_ERROR_RATE_EXPRESSION, ids("errors", "invocations"))).toEqual(
      [],
    );
  });

  it("accepts the cache hit ratio over hits and misses", () => {
    expect(checkMetricMath(CACHE_HIT_RATIO_EXPRESSION, ids("hits", "misses"))).toEqual([]);
  });

  it("accepts the summed SEARCH call metrics and the per-tool SEARCH durations", () => {
    for (const stage of ["dev", "prod"]) {
      expect(checkMetricMath(callMetricExpression(stage, "calls", "Sum"), ids())).toEqual([]);
      expect(checkMetricMath(durationExpression(stage, "p99"), ids())).toEqual([]);
    }
  });
});

describe("checkMetricMath accepts the CloudWatch documentation's examples", () => {
  // The Examples column of "Functions supported for metric math", the operator tables, the IF
  // section, search-expression-syntax and INSIGHT_RULE_METRIC's page: each is a valid result.
  const examples = [
    "ABS(m1-m2)",
    "MIN(ABS([m1, m2]))",
    "ABS(METRICS())",
    "ANOMALY_DETECTION_BAND(m1)",
    "ANOMALY_DETECTION_BAND(m1,4)",
    "SUM([m1,m2])/AVG(m2)",
    "AVG(METRICS())",
    "CEIL(m1)",
    "SUM(CEIL(METRICS()))",
    "DATAPOINT_COUNT(METRICS())",
    "DIFF(m1)",
    "DIFF_TIME(METRICS())",
    "FILL(m1,10)",
    "FILL(METRICS(), 0)",
    "FILL(METRICS(), m1)",
    "FILL(m1, MIN(m1))",
    "FILL(m1, REPEAT)",
    "FILL(METRICS(), LINEAR)",
    "IF(FIRST(SORT(METRICS(), AVG, DESC))>100, 1, 0)",
    "LAST(ANOMALY_DETECTION_BAND(m1))",
    "FLOOR(METRICS())",
    'INSIGHT_RULE_METRIC("RejectedConnectionsRule", "Sum")',
    "LOG(METRICS())",
    "LOG10(m1)",
    "MAX(m1)/m1",
    "MAX(METRICS())",
    "m1/METRIC_COUNT(METRICS())",
    'SUM(METRICS("errors"))',
    'SUM([METRICS("4xx"), METRICS("5xx")])',
    "m1-MIN(m1)",
    "MINUTE(m1)",
    "IF(DAY(m1)<6,m1)",
    "IF(MONTH(m1) == 4,m1)",
    "EPOCH(m1)",
    "m1/PERIOD(m1)",
    "RATE(METRICS())",
    "REMOVE_EMPTY(METRICS())",
    "RUNNING_SUM([m1,m2])",
    "SERVICE_QUOTA(m1)",
    "SLICE(SORT(METRICS(), SUM, DESC), 0, 10)",
    "SLICE(SORT(METRICS(), AVG, ASC), 5)",
    "SORT(METRICS(), AVG, DESC, 10)",
    "SORT(METRICS(), MAX, ASC)",
    "m1/STDDEV(m1)",
    "STDDEV(METRICS())",
    "SUM(METRICS())/SUM(m1)",
    'SUM(METRICS("errors"))/SUM(METRICS("requests"))*100',
    "TIME_SERIES(MAX(m1))",
    "TIME_SERIES(5*AVG(m1))",
    "TIME_SERIES(10)",
    "5 * m1",
    "m1 - m2",
    "SUM(100/[m1, m2])",
    "AVG([m1,m2]/m3)",
    "METRICS()*100",
    "-5*m1",
    "-m1",
    "SUM(-[m1, m2])",
    "(m1 < m2)",
    "(m1 >= 30)",
    "(m1 > 15 AND m2 > 15)",
    "(m1 > 15 && m2 > 15 || m3 != 0)",
    "IF(m1<400, m1)",
    "IF(m1<400, 10, 2)",
    "IF(m1, m2, m3)",
    "IF(m1, 5, m3)",
    "IF(m1, m2, 5)",
    "IF(1, m2, m3)",
    `SEARCH(' {AWS/EC2,InstanceId} MetricName="CPUUtilization" ', 'Average', 300)`,
    `SEARCH('{AWS/EC2,InstanceId} MetricName="CPUUtilization"', 'Average')`,
    `SEARCH(' {"My Namespace", "Dimension@Name"}, "Custom:Name[Special_Characters" ', 'Maximum', 120)`,
    `SEARCH(' "Europe\\\\France Traffic\\(Network\\)" ', 'Sum', 60)`,
    `SUM(SEARCH(' {AWS/Lambda, FunctionName} MetricName="Errors" ', 'Sum', 300))`,
  ];

  it.each(examples)("accepts %s", (expression) => {
    expect(checkMetricMath(expression, ids("m1", "m2", "m3"))).toEqual([]);
  });

  it("leaves Metrics Insights queries, a different language in the same field, alone", () => {
    const query = 'SELECT AVG(CPUUtilization) FROM SCHEMA("AWS/EC2", InstanceId)';
    expect(checkMetricMath(query, ids())).toEqual([]);
  });

  it("accepts an id of another expression that returns an array (a SEARCH row)", () => {
    expect(checkMetricMath("SUM(e1)", { timeSeries: [], timeSeriesArrays: ["e1"] })).toEqual([]);
  });
});

describe("checkMetricMath rejects what CloudWatch would reject at deploy time", () => {
  it("rejects a scalar inside MAX's array, naming the scalar and CloudWatch's error", () => {
    const problems = checkMetricMath(BROKEN_ERROR_RATE, ids("errors", "invocations"));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`MAX's array argument "[invocations, 1]" holds the Scalar "1"`);
    expect(problems[0]).toContain(
      "Unsupported operand type(s) for MAX: '[Array[TimeSeries, Scalar]]'",
    );
  });

  it("rejects the old cache ratio's MAX([hits + misses, 1]) the same way", () => {
    const problems = checkMetricMath("100 * hits / MAX([hits + misses, 1])", ids("hits", "misses"));
    expect(problems).toEqual([expect.stringContaining(`holds the Scalar "1"`)]);
  });

  it("rejects a scalar in an array used with an operator or by SUM, AVG and MIN", () => {
    expect(checkMetricMath("SUM(100/[m1, 2])", ids("m1"))).toEqual([
      expect.stringContaining(`holds the Scalar "2"`),
    ]);
    for (const fn of ["SUM", "AVG", "MIN", "STDDEV"]) {
      expect(checkMetricMath(`m1 / ${fn}([m1, 0])`, ids("m1"))).toEqual([
        expect.stringContaining(`${fn}'s array argument`),
      ]);
    }
  });

  it("rejects unknown functions, and lowercase spellings of known ones", () => {
    expect(checkMetricMath("MEDIAN(m1)", ids("m1"))).toEqual([
      expect.stringContaining("unknown function MEDIAN"),
    ]);
    expect(checkMetricMath("max(METRICS())", ids())).toEqual([
      expect.stringContaining("unknown function max (functions are written in uppercase)"),
    ]);
  });

  it("rejects the wrong number of arguments", () => {
    expect(checkMetricMath("ABS(m1, m2)", ids("m1", "m2"))).toEqual([
      expect.stringContaining("ABS takes 1 argument, got 2"),
    ]);
    expect(checkMetricMath("IF(m1)", ids("m1"))).toEqual([
      expect.stringContaining("IF takes 2 or 3 arguments, got 1"),
    ]);
    expect(checkMetricMath("SEARCH('{AWS/EC2} CPUUtilization')", ids())).toEqual([
      expect.stringContaining("SEARCH takes 2 or 3 arguments, got 1"),
    ]);
  });

  it("rejects arguments of undocumented types", () => {
    for (const expression of [
      "TIME_SERIES(m1)",
      "FIRST(m1)",
      "SEARCH(m1, 'Sum', 300)",
      "IF(METRICS(), m1, 0)",
      "IF(1, 2, 3) + m1",
      "FILL(m1, m2)",
      "MINUTE(METRICS())",
    ]) {
      expect(checkMetricMath(expression, ids("m1", "m2")), expression).toEqual([
        expect.stringContaining("is not a documented form"),
      ]);
    }
  });

  it("rejects bare words that are not a keyword of that argument", () => {
    expect(checkMetricMath("SORT(METRICS(), MEDIAN, DESC)", ids())).toEqual([
      expect.stringContaining(`unknown name "MEDIAN"`),
    ]);
    expect(checkMetricMath("M1 + 1", ids("m1"))).toEqual([
      expect.stringContaining(`unknown name "M1"`),
    ]);
  });

  it("rejects ids no metric or expression has", () => {
    expect(checkMetricMath("errors / requests", ids("errors"))).toEqual([
      expect.stringContaining(`unknown id "requests"`),
    ]);
  });

  it("rejects unbalanced parentheses and brackets", () => {
    for (const expression of ["ABS(m1", "(m1 + m2))", "[m1, m2", "ABS(m1])", ")"]) {
      expect(checkMetricMath(expression, ids("m1", "m2")), expression).toEqual([
        expect.stringContaining("syntax error"),
      ]);
    }
  });

  it("rejects other syntax errors: strings never closed, stray characters, nothing at all", () => {
    expect(checkMetricMath("SEARCH('{AWS/EC2} x, 'Sum')", ids())[0]).toContain("syntax error");
    expect(checkMetricMath("m1 % 2", ids("m1"))[0]).toContain(`unexpected character "%"`);
    expect(checkMetricMath("", ids())[0]).toContain("syntax error");
  });

  it("rejects a scalar result and strings outside function arguments", () => {
    expect(checkMetricMath("MAX(m1)", ids("m1"))).toEqual([
      expect.stringContaining("the result is a scalar"),
    ]);
    expect(checkMetricMath("m1 + 'x'", ids("m1"))).toEqual([
      expect.stringContaining("is a string"),
    ]);
  });
});

/** A bare app with one good and one broken alarm and a dashboard with one of each. */
function templateWithAlarmsAndDashboard() {
  const stack = new Stack(new App(), "MetricMath");
  const metric = (name: string) =>
    new cloudwatch.Metric({
      namespace: "AWS/Lambda",
      metricName: name,
      dimensionsMap: { FunctionName: "handler" },
      statistic: "Sum",
      period: Duration.minutes(5),
    });
  const using = { errors: metric("Errors"), invocations: metric("Invocations") };
  const rate = (expression: string) =>
    new cloudwatch.MathExpression({ expression, usingMetrics: using, period: Duration.minutes(5) });
  const alarm = (id: string, expression: string) =>
    new cloudwatch.Alarm(stack, id, {
      metric: rate(expression),
      threshold: 5,
      evaluationPeriods: 1,
    });
  const good = alarm("GoodAlarm", HANDLER_ERROR_RATE_EXPRESSION);
  alarm("BrokenAlarm", BROKEN_ERROR_RATE);
  const sum = (name: string) =>
    new cloudwatch.MathExpression({
      expression: callMetricExpression("dev", name, "Sum"),
      period: Duration.minutes(5),
    });
  const ratio = (expression: string) =>
    new cloudwatch.MathExpression({
      expression,
      usingMetrics: { hits: sum("cacheHits"), misses: sum("cacheMisses") },
      period: Duration.minutes(5),
    });
  new cloudwatch.Dashboard(stack, "Board", {
    widgets: [
      [
        new cloudwatch.GraphWidget({ title: "good", left: [ratio(CACHE_HIT_RATIO_EXPRESSION)] }),
        new cloudwatch.GraphWidget({
          title: "broken",
          left: [ratio("100 * hits / MAX([hits + misses, 1])"), metric("Errors")],
        }),
        new cloudwatch.AlarmStatusWidget({ alarms: [good] }),
      ],
    ],
  });
  return Template.fromStack(stack).toJSON();
}

describe("metricMathProblems over a synthesized template", () => {
  const template = templateWithAlarmsAndDashboard();
  const logicalId = (type: string, prefix: string) =>
    Object.keys(template.Resources).find(
      (id) => template.Resources[id].Type === type && id.startsWith(prefix),
    ) as string;

  it("synthesizes the dashboard body as an Fn::Join around tokens", () => {
    const body =
      template.Resources[logicalId("AWS::CloudWatch::Dashboard", "Board")].Properties.DashboardBody;
    expect(body["Fn::Join"][1]).toContainEqual({ Ref: "AWS::Region" });
  });

  it("reports the broken alarm and the broken dashboard row, naming each resource and expression", () => {
    const problems = metricMathProblems(template);
    expect(problems).toHaveLength(2);
    const alarm = problems.find((p) => p.startsWith(logicalId("AWS::CloudWatch::Alarm", "Broken")));
    expect(alarm).toContain(BROKEN_ERROR_RATE);
    expect(alarm).toContain(`holds the Scalar "1"`);
    const board = problems.find((p) =>
      p.startsWith(logicalId("AWS::CloudWatch::Dashboard", "Board")),
    );
    expect(board).toContain(`"broken"`);
    expect(board).toContain("100 * hits / MAX([hits + misses, 1])");
  });

  it("reports nothing for the good alarm or the good dashboard row", () => {
    const problems = metricMathProblems(template);
    expect(problems.join("\n")).not.toContain(logicalId("AWS::CloudWatch::Alarm", "Good"));
    expect(problems.join("\n")).not.toContain(`"good"`);
  });

  it("reports an alarm that uses SEARCH, which CloudWatch alarms cannot", () => {
    const problems = metricMathProblems({
      Resources: {
        SearchAlarm: {
          Type: "AWS::CloudWatch::Alarm",
          Properties: {
            Metrics: [{ Id: "e1", Expression: callMetricExpression("dev", "calls", "Sum") }],
          },
        },
      },
    });
    expect(problems).toEqual([
      expect.stringMatching(/^SearchAlarm e1 .*an alarm cannot use SEARCH$/),
    ]);
  });

  it("types an expression row by its result: SUM over a SEARCH row is fine, MAX([row, 1]) is not", () => {
    const body = JSON.stringify({
      widgets: [
        {
          properties: {
            metrics: [
              [{ expression: durationExpression("dev", "p99"), id: "d", visible: false }],
              [{ expression: "SUM(d) / 2", id: "half" }],
              [{ expression: "FIRST(d) + half", id: "e3" }],
              [{ expression: "MAX([d, 1])" }],
              [{ expression: "loop + 1", id: "loop" }],
            ],
          },
        },
      ],
    });
    const problems = metricMathProblems({
      Resources: {
        Board: { Type: "AWS::CloudWatch::Dashboard", Properties: { DashboardBody: body } },
      },
    });
    expect(problems).toEqual([
      expect.stringContaining(`MAX's array argument "[d, 1]" holds the Scalar "1"`),
      expect.stringContaining(`"loop" refers back to this expression`),
    ]);
  });

  it("reports a dashboard body that is not JSON", () => {
    const problems = metricMathProblems({
      Resources: {
        Board: {
          Type: "AWS::CloudWatch::Dashboard",
          Properties: { DashboardBody: { "Fn::Join": ["", ['{"widgets":', { Ref: "X" }, "}"]] } },
        },
      },
    });
    expect(problems).toEqual([expect.stringMatching(/^Board: DashboardBody is not JSON/)]);
  });
});

describe("checkMetricMath on hostile input", () => {
  const pieces = [
    "(",
    ")",
    "[",
    "]",
    ",",
    " ",
    "m1",
    "x",
    "M",
    "MAX",
    "IF(",
    "SEARCH(",
    "SORT(",
    "'",
    '"',
    "\\",
    "1",
    ".",
    "-",
    "+",
    "*",
    "/",
    "^",
    ">",
    "=",
    "==",
    "AND",
    "OR",
    "&",
    "|",
    "#",
    "\u00e9",
    "constructor(",
    "__proto__",
    "toString(",
  ];
  const tokenSoup = (maxLength: number) =>
    fc.array(fc.constantFrom(...pieces), { maxLength }).map((parts) => parts.join(""));

  it("never throws and returns problems as strings, whatever the input", () => {
    fc.assert(
      fc.property(
        fc.oneof(tokenSoup(200), fc.string({ unit: "binary", maxLength: 200 })),
        (input) => {
          const problems = checkMetricMath(input, ids("m1"));
          expect(Array.isArray(problems)).toBe(true);
          for (const problem of problems) expect(typeof problem).toBe("string");
          // At most ten problems, a "... and more", and a syntax error that ended the check.
          expect(problems.length).toBeLessThanOrEqual(12);
        },
      ),
    );
  });

  it("stays linear on long random inputs: ~100k characters each check in well under a second", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...pieces), { minLength: 40_000, maxLength: 50_000 }),
        (parts) => {
          const input = parts.join("");
          const started = performance.now();
          const problems = checkMetricMath(input, ids("m1"));
          expect(performance.now() - started).toBeLessThan(1_000);
          expect(problems.every((p) => p.length < 1_000)).toBe(true);
        },
      ),
      { numRuns: 10 },
    );
  });

  it("reports deep nesting as a problem instead of overflowing the stack", () => {
    const deep = [
      "(".repeat(100_000),
      "[".repeat(100_000),
      `${"ABS(".repeat(50_000)}m1${")".repeat(50_000)}`,
      `${"[".repeat(50_000)}m1${"]".repeat(50_000)}`,
      `${"-".repeat(100_000)}m1`,
      `m1${" ^ m1".repeat(20_000)}`,
      `m1${" + m1".repeat(20_000)}`,
    ];
    for (const input of deep) {
      const started = performance.now();
      const problems = checkMetricMath(input, ids("m1"));
      expect(performance.now() - started).toBeLessThan(1_000);
      if (input.startsWith("m1") || input.startsWith("-")) {
        expect(problems).toEqual([]);
      } else {
        expect(problems).toEqual([expect.stringContaining("nested more than 100 levels deep")]);
      }
    }
  });
});
