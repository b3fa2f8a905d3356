import { readdirSync } from "node:fs";
import { join } from "node:path";
import { parseStageConfig, REGISTERED_SECRET_PREFIX, toolSpecOf } from "@toolbus/core";
import { builtinTools } from "@toolbus/tools";
import { App, Stack } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import { describe, expect, it } from "vitest";
import { notifyAlarms } from "../stacks/alarm-topic";
import {
  DEFAULT_STAGE_FILE,
  providerSecretNames,
  STAGE_FILES,
  type StackConfig,
  StackConfigError,
  searchSecretNames,
  stackConfigFor,
  type ToolLimits,
} from "../stacks/config";
import { synthesizeStage } from "../stacks/synth";
import { CONFIG_CONTEXT, LAMBDA_RUNTIME, queueArnOf } from "../stacks/Toolbus";

const tools: ToolLimits[] = builtinTools.map((tool) => ({
  id: tool.spec.id,
  timeoutMs: toolSpecOf(tool).timeoutMs,
  ...(tool.settings ? { settings: tool.settings } : {}),
}));

// biome-ignore lint/suspicious/noExplicitAny: configs under test are deliberately malformed.
type Raw = Record<string, any>;
const valid = () => structuredClone(STAGE_FILES.dev) as Raw;
/** prod as shipped, with the one thing an operator must fill in filled in. */
const prodWithAlarms = () => ({
  ...(structuredClone(STAGE_FILES.prod) as Raw),
  alarms: { emails: ["oncall@toolbus.test"] },
});

/** One alarm on a plain stack, notified as the stage's config says. */
function alarmTemplate(alarms: StackConfig["alarms"]): Template {
  const stack = new Stack(new App(), "Alarms");
  const alarm = new cloudwatch.Alarm(stack, "Alarm", {
    metric: new cloudwatch.Metric({ namespace: "Toolbus", metricName: "failed" }),
    threshold: 0,
    evaluationPeriods: 1,
  });
  notifyAlarms(stack, "dev", [alarm], alarms);
  return Template.fromStack(stack);
}

describe("the runtime the tests run on", () => {
  it("is the Node major Lambda runs the functions on", () => {
    // npm's scripts put the node-<platform> package's binary first on PATH (package.json).
    const lambdaMajor = Number(/^nodejs(\d+)\.x$/.exec(LAMBDA_RUNTIME)?.[1]);
    expect(Number(process.versions.node.split(".")[0])).toBe(lambdaMajor);
  });
});

describe("per-stage stack configuration", () => {
  it("has a dev, a staging and a prod file, each valid for its stage", () => {
    const files = readdirSync(join(import.meta.dirname, "../stacks/config"))
      .filter((file) => file.endsWith(".json"))
      .map((file) => file.replace(/\.json$/, ""))
      .sort();
    expect(files).toEqual(["dev", "prod", "staging"]);
    expect(Object.keys(STAGE_FILES).sort()).toEqual(files);
    for (const stage of files.filter((file) => file !== "prod")) {
      const config = stackConfigFor(stage, { tools });
      expect(config.source).toBe(`stacks/config/${stage}.json`);
      expect(config.toolbus.stage).toBe(stage);
      // The runtime's half is exactly what core validates at a function's cold start.
      expect(parseStageConfig(JSON.parse(config.toolbusJson))).toEqual(config.toolbus);
    }
  });

  it("ships prod with its alarm addresses to fill in, and refuses to deploy it until they are", () => {
    const error = catchError(() => stackConfigFor("prod", { tools }));
    expect(error).toBeInstanceOf(StackConfigError);
    expect(error.message).toContain("stacks/config/prod.json");
    expect(error.message).toMatch(/alarms\.emails: name at least one address to notify/);
    const filled = stackConfigFor("prod", { raw: prodWithAlarms(), tools });
    expect(filled.alarms).toEqual({ emails: ["oncall@toolbus.test"] });
    expect(parseStageConfig(JSON.parse(filled.toolbusJson))).toEqual(filled.toolbus);
  });

  it("protects data in prod only, and sizes prod at least as generously as dev", () => {
    const dev = stackConfigFor("dev");
    const prod = stackConfigFor("prod", { raw: prodWithAlarms() });
    expect(prod.data).toEqual({
      retain: true,
      pointInTimeRecovery: true,
      deletionProtection: true,
    });
    expect(dev.data.retain).toBe(false);
    expect(stackConfigFor("staging").data.retain).toBe(false);
    expect(prod.logs.retentionDays).toBeGreaterThanOrEqual(dev.logs.retentionDays);
    expect(prod.events.archiveRetentionDays).toBeGreaterThanOrEqual(
      dev.events.archiveRetentionDays,
    );
  });

  it("gives a personal stage the dev file under its own stage name", () => {
    const config = stackConfigFor("alice");
    expect(config.source).toBe(`stacks/config/${DEFAULT_STAGE_FILE}.json`);
    expect(config.toolbus.stage).toBe("alice");
  });

  it("reports every problem of a bad file at once, each with its path", () => {
    const raw = valid();
    raw.functions.api = { memoryMB: 64, timeoutSeconds: 29 };
    raw.logs = { retentionDays: 8 };
    raw.tracing = "sometimes";
    raw.surprise = {};
    const error = catchError(() => stackConfigFor("dev", { raw }));
    expect(error).toBeInstanceOf(StackConfigError);
    expect(error.message).toContain('stage "dev"');
    expect(error.message).toContain("functions.api.memoryMB");
    expect(error.message).toContain("logs.retentionDays: must be one of CloudWatch's");
    expect(error.message).toContain("tracing");
    expect(error.message).toMatch(/surprise/);
  });

  it("lets a call run as long as the tool functions allow, and no longer", () => {
    const raw = valid();
    raw.functions.tool = { ...raw.functions.tool, timeoutSeconds: 65 };
    const config = stackConfigFor("dev", { raw, tools: [] });
    expect(config.toolbus.calls.longestRunSeconds).toBe(60);
    expect(JSON.parse(config.toolbusJson).calls.longestRunSeconds).toBe(60);

    raw.toolbus = { ...raw.toolbus, calls: { longestRunSeconds: 30 } };
    expect(stackConfigFor("dev", { raw, tools: [] }).toolbus.calls.longestRunSeconds).toBe(30);

    raw.toolbus = { ...raw.toolbus, calls: { longestRunSeconds: 600 } };
    const error = catchError(() => stackConfigFor("dev", { raw, tools: [] }));
    expect(error).toBeInstanceOf(StackConfigError);
    expect(error.message).toContain(
      "calls.longestRunSeconds: 600 s is more than the tool functions allow",
    );
  });

  it("makes every stage say who hears its alarms: e-mails, a topic it has, or nobody and why", () => {
    const alarmsOf = (alarms: unknown) => {
      const raw = valid();
      raw.alarms = alarms;
      return stackConfigFor("dev", { raw }).alarms;
    };
    expect(stackConfigFor("dev").alarms).toMatchObject({ nobody: expect.any(String) });
    expect(alarmsOf({ nobody: "a sandbox nobody watches" })).toEqual({
      nobody: "a sandbox nobody watches",
    });
    expect(alarmsOf({ emails: ["oncall@example.com"] })).toEqual({
      emails: ["oncall@example.com"],
    });
    const arn = "arn:aws:sns:eu-west-1:123456789012:pager";
    expect(alarmsOf({ topicArn: arn })).toEqual({ topicArn: arn });
    for (const bad of [
      { emails: ["not an address"] },
      { emails: [] },
      { topicArn: "arn:aws:sqs:eu-west-1:123456789012:queue" },
      { emails: ["oncall@example.com"], topicArn: arn },
      { slack: "#oncall" },
      { nobody: "" },
      undefined,
    ]) {
      expect(() => alarmsOf(bad), JSON.stringify(bad)).toThrow(/alarms/);
    }
  });

  it("subscribes the e-mails to a topic of the stage's own, and sends alarm and recovery there", () => {
    const template = alarmTemplate({ emails: ["a@example.com", "b@example.com"] });
    template.resourceCountIs("AWS::SNS::Topic", 1);
    template.hasResourceProperties("AWS::SNS::Topic", { TopicName: "toolbus-dev-alarms" });
    const subscriptions = template.findResources("AWS::SNS::Subscription");
    expect(Object.values(subscriptions).map((r) => r.Properties.Endpoint)).toEqual([
      "a@example.com",
      "b@example.com",
    ]);
    const [alarm] = Object.values(template.findResources("AWS::CloudWatch::Alarm"));
    const topicRef = { Ref: Object.keys(template.findResources("AWS::SNS::Topic"))[0] };
    // Publishing in the clear is refused (cdk-nag's SNS3).
    template.hasResourceProperties("AWS::SNS::TopicPolicy", {
      PolicyDocument: {
        Statement: [
          {
            Effect: "Deny",
            Action: "sns:Publish",
            Condition: { Bool: { "aws:SecureTransport": "false" } },
          },
        ],
      },
    });
    expect(alarm?.Properties.AlarmActions).toEqual([topicRef]);
    expect(alarm?.Properties.OKActions).toEqual([topicRef]);
  });

  it("names an allow-listed queue by the ARN its URL stands for", () => {
    expect(queueArnOf("https://sqs.eu-west-1.amazonaws.com/123456789012/jobs.fifo")).toBe(
      "arn:aws:sqs:eu-west-1:123456789012:jobs.fifo",
    );
    expect(queueArnOf("https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q")).toBe(
      "arn:aws-cn:sqs:cn-north-1:123456789012:q",
    );
  });

  it("notifies nobody, with no topic, where the stage says so", () => {
    const template = alarmTemplate({ nobody: "a sandbox" });
    template.resourceCountIs("AWS::SNS::Topic", 0);
    const [alarm] = Object.values(template.findResources("AWS::CloudWatch::Alarm"));
    expect(alarm?.Properties.AlarmActions).toBeUndefined();
  });

  it("uses a topic the team already has as it is, subscribing nobody to it", () => {
    const arn = "arn:aws:sns:eu-west-1:123456789012:pager";
    const template = alarmTemplate({ topicArn: arn });
    template.resourceCountIs("AWS::SNS::Topic", 0);
    template.resourceCountIs("AWS::SNS::Subscription", 0);
    const [alarm] = Object.values(template.findResources("AWS::CloudWatch::Alarm"));
    expect(alarm?.Properties.AlarmActions).toEqual([arn]);
    expect(alarm?.Properties.OKActions).toEqual([arn]);
  });

  it("checks the runtime's own config, tool settings and the limits AWS imposes", () => {
    const cases: Array<[string, (raw: Raw) => void, RegExp]> = [
      [
        "an unknown role",
        (raw) => {
          raw.toolbus = { ...raw.toolbus, permissions: { read: "x", call: "x", admin: "root" } };
        },
        /permissions\.read: "x" is not one of roles/,
      ],
      [
        "another stage's name",
        (raw) => {
          raw.toolbus = { ...raw.toolbus, stage: "prod" };
        },
        /toolbus\.stage: is "prod"/,
      ],
      [
        "a tool setting its schema refuses",
        (raw) => {
          raw.toolbus = { ...raw.toolbus, tools: { web_search: { provider: "altavista" } } };
        },
        /toolbus\.tools\.web_search\.provider/,
      ],
      [
        "settings for a tool the stack does not have",
        (raw) => {
          raw.toolbus = { ...raw.toolbus, tools: { no_such_tool: {} } };
        },
        /toolbus\.tools\.no_such_tool: there is no tool/,
      ],
      [
        "an API timeout past API Gateway's 30 s",
        (raw) => {
          raw.functions = { ...raw.functions, api: { memoryMB: 1024, timeoutSeconds: 31 } };
        },
        /more than the 30 s an HTTP API waits/,
      ],
      [
        "an API timeout shorter than the longest wait",
        (raw) => {
          raw.functions = { ...raw.functions, api: { memoryMB: 1024, timeoutSeconds: 10 } };
        },
        /maxWaitSeconds/,
      ],
      [
        "a tool timeout shorter than a tool runs",
        (raw) => {
          raw.functions = { ...raw.functions, tool: { memoryMB: 512, timeoutSeconds: 10 } };
        },
        /too short for link_validator/,
      ],
      [
        "a streaming timeout shorter than an MCP call's wait",
        (raw) => {
          raw.functions = { ...raw.functions, streaming: { memoryMB: 512, timeoutSeconds: 20 } };
        },
        /functions\.streaming\.timeoutSeconds: 20 s leaves no room/,
      ],
      [
        "a custom domain without a certificate ACM holds",
        (raw) => {
          raw.api = { ...raw.api, domain: { name: "tools.example.com", certificateArn: "x" } };
        },
        /api\.domain\.certificateArn: must be an ACM certificate ARN/,
      ],
      [
        "a streaming endpoint with no concurrency at all",
        (raw) => {
          raw.streaming = { ...raw.streaming, reservedConcurrency: 0 };
        },
        /streaming\.reservedConcurrency/,
      ],
      [
        "a provider's client secret where registered toolsets may read it",
        (raw) => {
          raw.toolbus = {
            ...raw.toolbus,
            connections: {
              publicUrl: "https://tools.example.com",
              providers: {
                github: { clientId: "Iv1.x", clientSecret: `${REGISTERED_SECRET_PREFIX}GITHUB` },
              },
            },
          };
        },
        /toolbus\.connections\.providers\.github\.clientSecret: TOOLSET_GITHUB is under TOOLSET_, which registered toolsets may read/,
      ],
      [
        "more runtime config than a function's environment holds",
        (raw) => {
          raw.toolbus = { ...raw.toolbus, modes: big() };
        },
        /a function's environment can carry/,
      ],
    ];
    for (const [what, change, message] of cases) {
      const raw = valid();
      change(raw);
      const error = catchError(() => stackConfigFor("dev", { raw, tools }));
      expect(error, what).toBeInstanceOf(StackConfigError);
      expect(error.message, what).toMatch(message);
    }
  });

  it("names each connection provider's client secret once, for the stack to bind", () => {
    expect(providerSecretNames(stackConfigFor("dev", { tools }).toolbus)).toEqual([]);
    const raw = valid();
    raw.toolbus = {
      ...raw.toolbus,
      connections: {
        publicUrl: "https://tools.example.com",
        providers: {
          google: { clientId: "g", clientSecret: "GOOGLE_OAUTH_SECRET" },
          github: { clientId: "Iv1.x", clientSecret: "GITHUB_OAUTH_SECRET" },
          // Two providers may share one secret; a public client names none.
          acme: {
            clientId: "a",
            clientSecret: "GITHUB_OAUTH_SECRET",
            authorizeUrl: "https://id.acme.example/authorize",
            tokenUrl: "https://id.acme.example/token",
          },
          pub: {
            clientId: "p",
            authorizeUrl: "https://id.pub.example/authorize",
            tokenUrl: "https://id.pub.example/token",
          },
        },
      },
    };
    const config = stackConfigFor("dev", { raw, tools });
    expect(providerSecretNames(config.toolbus)).toEqual([
      "GITHUB_OAUTH_SECRET",
      "GOOGLE_OAUTH_SECRET",
    ]);
  });

  it("names the embedding provider's key, for the stack to bind to the API", () => {
    expect(searchSecretNames(stackConfigFor("dev", { tools }).toolbus)).toEqual([]);
    const raw = valid();
    raw.toolbus = {
      ...raw.toolbus,
      search: {
        embeddings: { url: "https://embed.example.com/v1", model: "m", apiKey: "EMBEDDINGS_KEY" },
      },
    };
    expect(searchSecretNames(stackConfigFor("dev", { raw, tools }).toolbus)).toEqual([
      "EMBEDDINGS_KEY",
    ]);
  });

  it("fails synthesis, before anything is bundled, when the config is not valid", async () => {
    const raw = valid();
    raw.events = { ...raw.events, deadLetterRetentionDays: 30 };
    await expect(synthesizeStage("dev", { context: { [CONFIG_CONTEXT]: raw } })).rejects.toThrow(
      /stack configuration for stage "dev" \(the given config\) is not valid:\n {2}- events\.deadLetterRetentionDays/,
    );
  }, 120_000);
});

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected an error");
}

/** Modes enough to push TOOLBUS_CONFIG past what Lambda's environment allows. */
function big() {
  const available = Array.from({ length: 200 }, (_, i) => `mode-with-a-long-name-${i}`);
  return { default: available[0], available };
}
