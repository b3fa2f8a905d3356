import { REGISTERED_SECRET_PREFIX } from "@toolbus/core";
import { forStage, parseStageConfig, type StageConfig } from "@toolbus/core/config";
import { z } from "zod";
import dev from "./config/dev.json";
import prod from "./config/prod.json";
import staging from "./config/staging.json";

/**
 * What a stage's stack looks like: `stacks/config/<stage>.json`. `toolbus` is the runtime's own
 * stage configuration (modes, roles, wait limits, tool settings), handed to every function as
 * TOOLBUS_CONFIG; the rest sizes and protects the infrastructure. Validated when the app is
 * synthesized, so a bad file fails `sst deploy` before anything reaches AWS.
 */
export const STAGE_FILES: Readonly<Record<string, unknown>> = { dev, staging, prod };

/** Stages without a file of their own (personal stages: `--stage alice`) use this one. */
export const DEFAULT_STAGE_FILE = "dev";

/** CloudWatch Logs accepts only these retention periods (days). */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
  3653,
] as const;

const logRetentionDays = z
  .number()
  .refine((days) => (LOG_RETENTION_DAYS as readonly number[]).includes(days), {
    message: `must be one of CloudWatch's retention periods: ${LOG_RETENTION_DAYS.join(", ")}`,
  });

const functionSize = z
  .object({
    memoryMB: z.number().int().min(128).max(10_240),
    timeoutSeconds: z.number().int().min(1).max(900),
  })
  .strict();

export const stackConfig = z
  .object({
    toolbus: z.record(z.string(), z.unknown()).default({}),
    /** Production data protection: the table survives `sst remove` and accidental deletes. */
    data: z
      .object({
        retain: z.boolean(),
        pointInTimeRecovery: z.boolean(),
        deletionProtection: z.boolean(),
      })
      .strict(),
    logs: z.object({ retentionDays: logRetentionDays }).strict(),
    tracing: z.enum(["active", "pass_through", "disabled"]),
    /**
     * Who hears of an alarm (stacks/alarm-topic.ts). Every stage says so: e-mails, a topic the
     * team has, or, explicitly, nobody (alarms then only change state on the dashboard), so a
     * production stage cannot go live paging no one by an omission.
     */
    alarms: z.union([
      z
        .object({
          emails: z
            .array(z.email())
            .min(
              1,
              'name at least one address to notify (or a topicArn, or {"nobody": "<why>"} to alarm on the dashboard only)',
            )
            .max(10),
        })
        .strict(),
      z
        .object({
          topicArn: z
            .string()
            .regex(
              /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/,
              "must be an SNS topic ARN",
            ),
        })
        .strict(),
      z.object({ nobody: z.string().trim().min(3, "say why nobody is notified") }).strict(),
    ]),
    functions: z
      .object({
        api: functionSize,
        /** The streaming endpoint (event streams, /mcp): a Function URL, up to 15 minutes. */
        streaming: functionSize,
        tool: functionSize,
        recorder: functionSize,
        seed: functionSize,
      })
      .strict(),
    api: z
      .object({
        /** API Gateway's stage-wide rate limit, before any request reaches a function. */
        throttle: z
          .object({
            burst: z.number().int().min(1).max(5000),
            rate: z.number().min(1).max(10_000),
          })
          .strict(),
        /**
         * A custom domain for the HTTP API: a certificate ACM already holds for it, in the
         * stage's region; you point the domain's DNS at the `ApiDomainTarget` output.
         */
        domain: z
          .object({
            name: z
              .string()
              .regex(
                /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
                "a lower-case DNS name (tools.example.com)",
              ),
            certificateArn: z
              .string()
              .regex(
                /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]{1,128}$/,
                "must be an ACM certificate ARN",
              ),
          })
          .strict()
          .optional(),
      })
      .strict(),
    /**
     * The streaming endpoint's limits. API Gateway's throttle does not apply to a Function URL:
     * reserved concurrency is what caps it (and keeps it from starving the tools). null leaves
     * it uncapped, for accounts whose concurrency quota is still AWS's starting 10.
     */
    streaming: z
      .object({
        reservedConcurrency: z.number().int().min(1).max(1000).nullable(),
        /** How often an open event stream reads the log for new events. */
        pollIntervalMs: z.number().int().min(250).max(10_000),
      })
      .strict(),
    events: z
      .object({
        /** EventBridge's retries when it cannot hand an event to a handler (throttled, denied). */
        delivery: z
          .object({
            retryAttempts: z.number().int().min(0).max(185),
            maxEventAgeSeconds: z.number().int().min(60).max(86_400),
          })
          .strict(),
        /** Lambda's retries when a handler accepted an event and then failed on it. */
        handler: z
          .object({
            retryAttempts: z.number().int().min(0).max(2),
            maxEventAgeSeconds: z.number().int().min(60).max(21_600),
          })
          .strict(),
        deadLetterRetentionDays: z.number().int().min(1).max(14),
        /** 0 keeps archived events indefinitely. */
        archiveRetentionDays: z.number().int().min(0).max(36_500),
      })
      .strict(),
  })
  .strict();

export type StackConfig = Omit<z.infer<typeof stackConfig>, "toolbus"> & {
  /** The runtime's configuration, validated, with the stage filled in. */
  toolbus: StageConfig;
  /** What functions receive as TOOLBUS_CONFIG: the file's own `toolbus` plus the stage. */
  toolbusJson: string;
  /** Which file it came from, for messages. */
  source: string;
};

/** Lambda allows 4 KB of environment per function; TOOLBUS_CONFIG must leave room. */
export const MAX_TOOLBUS_CONFIG_BYTES = 3 * 1024;

/** HTTP APIs give an integration at most 30 s. */
const API_GATEWAY_TIMEOUT_SECONDS = 30;

export class StackConfigError extends Error {
  override readonly name = "StackConfigError";
}

/** What the configuration is checked against for each tool the stack deploys. */
export interface ToolLimits {
  id: string;
  /** The longest the tool may run, with its fallback, in ms. */
  timeoutMs: number;
  /** The schema of `toolbus.tools.<id>`. */
  settings?: z.ZodType;
}

/**
 * The validated configuration of `stage`, from its file (or `raw` when given). Every problem
 * is reported at once, each with its path, under the file's name.
 */
export function stackConfigFor(
  stage: string,
  options: { raw?: unknown; tools?: readonly ToolLimits[] } = {},
): StackConfig {
  const file = Object.hasOwn(STAGE_FILES, stage) ? stage : DEFAULT_STAGE_FILE;
  const source = options.raw === undefined ? `stacks/config/${file}.json` : "the given config";
  function fail(problems: string[]): never {
    throw new StackConfigError(
      `The stack configuration for stage "${stage}" (${source}) is not valid:\n${problems
        .map((p) => `  - ${p}`)
        .join("\n")}`,
    );
  }
  const parsed = stackConfig.safeParse(options.raw ?? STAGE_FILES[file]);
  if (!parsed.success) fail(parsed.error.issues.map(describeIssue));
  const config = parsed.data;
  let runtime: Record<string, unknown> = config.toolbus;
  let toolbus: StageConfig;
  try {
    runtime = withLongestRun(
      forStage(config.toolbus, stage) as Record<string, unknown>,
      config.functions.tool.timeoutSeconds,
    );
    toolbus = parseStageConfig(runtime);
  } catch (error) {
    const details = (error as { details?: unknown }).details;
    fail(
      Array.isArray(details)
        ? details.map((d: { path?: string; message?: string }) => `toolbus.${d.path}: ${d.message}`)
        : [`toolbus: ${(error as Error).message}`],
    );
  }

  const problems: string[] = [];
  const api = config.functions.api.timeoutSeconds;
  if (api > API_GATEWAY_TIMEOUT_SECONDS) {
    problems.push(
      `functions.api.timeoutSeconds: ${api} s is more than the ${API_GATEWAY_TIMEOUT_SECONDS} s an HTTP API waits for its function`,
    );
  }
  if (api < toolbus.calls.maxWaitSeconds + 2) {
    problems.push(
      `functions.api.timeoutSeconds: ${api} s leaves no room for toolbus.calls.maxWaitSeconds (${toolbus.calls.maxWaitSeconds} s) plus 2 s`,
    );
  }
  const streaming = config.functions.streaming.timeoutSeconds;
  if (streaming < toolbus.calls.maxWaitSeconds + 5) {
    problems.push(
      `functions.streaming.timeoutSeconds: ${streaming} s leaves no room for an MCP call's wait (toolbus.calls.maxWaitSeconds, ${toolbus.calls.maxWaitSeconds} s) plus 5 s`,
    );
  }
  const tools = options.tools ?? [];
  const toolTimeout = config.functions.tool.timeoutSeconds;
  for (const { id, timeoutMs, settings } of tools) {
    if (toolTimeout < Math.ceil(timeoutMs / 1000) + 5) {
      problems.push(
        `functions.tool.timeoutSeconds: ${toolTimeout} s is too short for ${id}, which may run ${timeoutMs} ms (with its fallback) plus 5 s for storage and events`,
      );
    }
    const result = settings?.safeParse(toolbus.tools[id] ?? {});
    if (result && !result.success) {
      problems.push(
        ...result.error.issues.map((i) =>
          describeIssue({ ...i, path: ["toolbus", "tools", id, ...i.path] }),
        ),
      );
    }
  }
  if (tools.length > 0) {
    const known = new Set(tools.map((t) => t.id));
    for (const id of Object.keys(toolbus.tools).filter((id) => !known.has(id))) {
      problems.push(`toolbus.tools.${id}: there is no tool ${id} in this stack`);
    }
  }
  for (const [name, provider] of Object.entries(toolbus.connections?.providers ?? {})) {
    // Registered toolsets may name any secret under their prefix and send it upstream: an
    // OAuth client secret there would be theirs to read.
    if (provider.clientSecret?.startsWith(REGISTERED_SECRET_PREFIX)) {
      problems.push(
        `toolbus.connections.providers.${name}.clientSecret: ${provider.clientSecret} is under ${REGISTERED_SECRET_PREFIX}, which registered toolsets may read; name the client secret outside it`,
      );
    }
  }
  const toolbusJson = JSON.stringify(runtime);
  const bytes = Buffer.byteLength(toolbusJson);
  if (bytes > MAX_TOOLBUS_CONFIG_BYTES) {
    problems.push(
      `toolbus: ${bytes} bytes of JSON is more than the ${MAX_TOOLBUS_CONFIG_BYTES} bytes a function's environment can carry`,
    );
  }
  if (problems.length > 0) fail(problems);
  return { ...config, toolbus, toolbusJson, source };
}

/**
 * The secrets the stage's connection providers name as their client secret
 * (`connections.providers.<name>.clientSecret`), each once, sorted: the stack binds them to the
 * functions that use connected accounts.
 */
export function providerSecretNames(toolbus: StageConfig): string[] {
  const names = Object.values(toolbus.connections?.providers ?? {}).flatMap((provider) =>
    provider.clientSecret ? [provider.clientSecret] : [],
  );
  return [...new Set(names)].sort();
}

/** The secret holding the embedding provider's key (`search.embeddings.apiKey`), when one is named. */
export function searchSecretNames(toolbus: StageConfig): string[] {
  const name = toolbus.search?.embeddings?.apiKey;
  return name ? [name] : [];
}

/** Seconds a tool's function keeps after its tool's timeout to store and announce the result. */
const RESULT_MARGIN_SECONDS = 5;

/**
 * The stage's `calls.longestRunSeconds` as the tool functions allow: what the functions'
 * timeout leaves after storing and announcing, unless the stage asks for less. Asking for more
 * is refused by the check below (a registered tool could then outlive its function).
 */
function withLongestRun(
  runtime: Record<string, unknown>,
  toolTimeoutSeconds: number,
): Record<string, unknown> {
  const calls = (runtime.calls ?? {}) as Record<string, unknown>;
  const allowed = Math.max(1, toolTimeoutSeconds - RESULT_MARGIN_SECONDS);
  const asked = calls.longestRunSeconds;
  if (typeof asked === "number" && asked > allowed) {
    throw new StackConfigError(
      `calls.longestRunSeconds: ${asked} s is more than the tool functions allow (functions.tool.timeoutSeconds ${toolTimeoutSeconds} s less ${RESULT_MARGIN_SECONDS} s)`,
    );
  }
  return { ...runtime, calls: { ...calls, longestRunSeconds: asked ?? allowed } };
}

function describeIssue(issue: { path: PropertyKey[]; message: string }): string {
  return `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`;
}
