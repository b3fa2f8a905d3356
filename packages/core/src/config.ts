import { readFileSync } from "node:fs";
import { secretName } from "@toolbus/wire/model/implementation";
import { runPolicy } from "@toolbus/wire/model/run";
import * as z from "zod";
import { isKnownRole } from "./app/access";
import { conceptMemberProblem } from "./app/search/words";
import { connectionsConfig, connectionsConfigProblems } from "./connections/config";
import { type Issue, ValidationError, zodIssues } from "./errors";
import { oauthConfig, oauthConfigProblems, secureUrl } from "./oauth-config";
import { nearest } from "./util/nearest";

/**
 * Per-stage configuration. Modes, roles and tool settings are configuration, not code, so a
 * stage can differ without a deploy of new code. It arrives as JSON in TOOLBUS_CONFIG (or a
 * file named by TOOLBUS_CONFIG_FILE) and is validated here, once, at start-up.
 */
/** A stage's synonyms (`search.synonyms`): enough for an organization's vocabulary, bounded. */
const MAX_SYNONYM_GROUPS = 1_000;
const MAX_SYNONYM_MEMBERS = 16;
const MAX_SYNONYM_CHARS = 100;

export const stageConfig = z.strictObject({
  stage: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/)
    .default("local"),
  /** Roles from least to most privileged; a key's role must be one of them (see app/access.ts). */
  roles: z.array(z.string().min(1)).min(1).default(["viewer", "member", "admin"]),
  /** Which role may do what: read the catalog, call tools, administer. */
  permissions: z
    .strictObject({
      read: z.string(),
      call: z.string(),
      admin: z.string(),
      /** Who may create subscriptions; the `call` role when absent. */
      subscribe: z.string().optional(),
      /** Who may approve or deny a call that needs approval; the `admin` role when absent. */
      approve: z.string().optional(),
    })
    .default({ read: "viewer", call: "member", admin: "admin" }),
  modes: z
    .strictObject({ default: z.string().min(1), available: z.array(z.string().min(1)).min(1) })
    .default({ default: "default", available: ["default"] }),
  calls: z
    .strictObject({
      /** `wait` when the request gives none, and its cap, in seconds. */
      defaultWaitSeconds: z.number().min(0).max(60).default(5),
      maxWaitSeconds: z.number().min(0).max(60).default(25),
      /**
       * The longest one tool call may run on this stage, in seconds: no tool may have a
       * timeout beyond it (registrations are refused). On AWS the stack sets it from the tool
       * functions' timeout, less 5 s for storing and announcing the result.
       */
      longestRunSeconds: z.number().int().min(1).max(900).default(900),
    })
    .default({ defaultWaitSeconds: 5, maxWaitSeconds: 25, longestRunSeconds: 900 }),
  mcp: z
    .strictObject({
      /**
       * How long a 2026-07-28 client may keep a caller's `tools/list`, in seconds. 0 (the
       * default): it asks again every time, so an enabled, registered or removed tool shows at
       * once; no change is pushed to a client that keeps the list longer.
       */
      toolsListTtlSeconds: z.number().int().min(0).max(3600).default(0),
      /**
       * The host names `/mcp` answers, for DNS-rebinding protection: `Host`, and `Origin` when
       * a browser sends one, must name one of them. Default: loopback under `npm start`; on AWS
       * any (API Gateway and Function URLs route by host already).
       */
      allowedHosts: z.array(z.string().min(1).max(253)).min(1).max(50).optional(),
    })
    .default({ toolsListTtlSeconds: 0 }),
  outbound: z
    .strictObject({
      userAgent: z.string().min(1).default("Toolbus/0.1 (+https://github.com/toolbus)"),
      /** Hosts / CIDRs exempt from the SSRF guard. Keep empty in production. */
      allowHosts: z.array(z.string().min(1)).default([]),
      defaultTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
      defaultMaxBytes: z
        .number()
        .int()
        .min(1024)
        .max(50 * 1024 * 1024)
        .default(2 * 1024 * 1024),
      networkEnabled: z.boolean().default(true),
      /**
       * Where the `network` capability's check connects (TCP) to find out whether this stage
       * can reach the internet; `false` trusts `networkEnabled` alone.
       */
      networkProbe: z
        .union([
          z.literal(false),
          z.strictObject({
            host: z.string().min(1).max(253),
            port: z.number().int().min(1).max(65_535),
          }),
        ])
        .default({ host: "aws.amazon.com", port: 443 }),
      /**
       * The forward proxy requests (and the network probe) go through. Absent, HTTPS_PROXY /
       * HTTP_PROXY / NO_PROXY in the environment decide; set, it wins and they are not read;
       * `false` goes direct whatever they say. See outbound/proxy.ts.
       */
      proxy: z
        .union([
          z.literal(false),
          z.strictObject({
            url: z.string().refine(isHttpProxyUrl, {
              message: "expected http://[user:password@]host[:port]",
            }),
            /** Hosts that go direct: names (and their subdomains), addresses, CIDRs, `*`. */
            noProxy: z.array(z.string().min(1).max(300)).max(1000).default([]),
          }),
        ])
        .optional(),
    })
    .default({
      userAgent: "Toolbus/0.1 (+https://github.com/toolbus)",
      allowHosts: [],
      defaultTimeoutMs: 10_000,
      defaultMaxBytes: 2 * 1024 * 1024,
      networkEnabled: true,
      networkProbe: { host: "aws.amazon.com", port: 443 },
    }),
  observability: z
    .strictObject({
      /**
       * Put each call's input on its "call accepted" log line (truncated to
       * MAX_LOGGED_INPUT_CHARS). Off by default: inputs may hold what callers would not want in
       * a log group; turn it on for a stage where debugging is worth that.
       */
      logInputs: z.boolean().default(false),
    })
    .default({ logInputs: false }),
  subscriptions: z
    .strictObject({
      /** How long a webhook delivery is retried before it becomes a dead letter, hours. */
      retryWindowHours: z
        .number()
        .min(0.01)
        .max(24 * 7)
        .default(24),
      /** Failed attempts in a row after which a subscription is paused as failing. */
      pauseAfterFailures: z.number().int().min(1).max(10_000).default(100),
      /** Most subscriptions one key may own. */
      maxPerOwner: z.number().int().min(1).max(10_000).default(100),
      /** EventBridge buses and SQS queues a subscription may name (ARNs / URLs); none by default. */
      allowTargets: z.array(z.string().min(1).max(2048)).max(100).default([]),
    })
    .default({ retryWindowHours: 24, pauseAfterFailures: 100, maxPerOwner: 100, allowTargets: [] }),
  /** What one agent run may spend (see model/run.ts); every limit is off unless set. */
  runs: z.strictObject({ policy: runPolicy.default({}) }).default({ policy: {} }),
  /**
   * Calls that wait for a person's approval before they run: any rule that matches a call
   * (by tool, toolset, or every tool that may write) for a caller of the rule's roles (all when
   * absent). Undecided after `expireAfterMinutes`, a call fails as `approval_expired`.
   */
  approvals: z
    .strictObject({
      rules: z
        .array(
          z
            .strictObject({
              tools: z.array(z.string().min(1).max(48)).max(500).optional(),
              toolsets: z.array(z.string().min(1).max(64)).max(500).optional(),
              /** Every tool whose annotations do not say it only reads. */
              writes: z.boolean().optional(),
              roles: z.array(z.string().min(1)).optional(),
            })
            .refine((rule) => rule.tools || rule.toolsets || rule.writes, {
              message: "a rule names tools, toolsets, or writes: true",
            }),
        )
        .max(100)
        .default([]),
      expireAfterMinutes: z
        .number()
        .min(1)
        .max(7 * 24 * 60)
        .default(15),
    })
    .default({ rules: [], expireAfterMinutes: 15 }),
  /** The stage-wide event stream (`GET /v1/events`, replay by time window). */
  stream: z
    .strictObject({
      /** How long the stream keeps an event, days. */
      retentionDays: z.number().min(1).max(365).default(7),
    })
    .default({ retentionDays: 7 }),
  /**
   * How callers may sign in besides API keys. `oauth`: JWT access tokens of one authorization
   * server (oauth-config.ts); absent, API keys only and no protected-resource metadata.
   */
  auth: z.strictObject({ oauth: oauthConfig.optional() }).optional(),
  /**
   * People's own accounts at OAuth providers, for tools that act as the caller
   * (connections/config.ts); absent, every tool acts with the stage's secrets.
   */
  connections: connectionsConfig.optional(),
  /**
   * Tool search (docs/search.md). `embeddings`: an OpenAI-compatible embeddings API whose
   * vectors rank tools by meaning beside their words (app/search/semantic.ts); absent, search
   * is lexical only. `synonyms`: the stage's own words for things, as groups of words and
   * short phrases that stand for one another (app/search/concepts.ts), searched beside the
   * built-in ones.
   */
  search: z
    .strictObject({
      synonyms: z
        .array(z.array(z.string().min(1).max(MAX_SYNONYM_CHARS)).min(2).max(MAX_SYNONYM_MEMBERS))
        .max(MAX_SYNONYM_GROUPS)
        .optional(),
      embeddings: z
        .strictObject({
          /** The API's base URL (`POST <url>/embeddings`): https, http only for loopback. */
          url: secureUrl,
          model: z.string().min(1).max(200),
          /** The secret holding its key, sent as `Authorization: Bearer`; none when absent. */
          apiKey: secretName.optional(),
          /** Asked of models that can shorten their vectors (`dimensions`). */
          dimensions: z.number().int().min(1).max(8192).optional(),
          /** How much the semantic ranking counts in the fusion, the lexical one counting 1. */
          weight: z.number().positive().max(10).default(1),
        })
        .optional(),
    })
    .optional(),
  /** Each tool's own settings, validated by the tool's settings schema. */
  tools: z.record(z.string(), z.unknown()).default({}),
});
export type StageConfig = z.infer<typeof stageConfig>;

/** A proxy URL the outbound client can use: plain http to the proxy, nothing after the host. */
function isHttpProxyUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (
      url.protocol === "http:" &&
      url.hostname !== "" &&
      url.pathname === "/" &&
      !url.search &&
      !url.hash
    );
  } catch {
    return false;
  }
}

/**
 * The stage configuration, or a ValidationError whose message lists every problem by path
 * (an unknown key with the known key it was probably meant to be): the message is all a
 * person starting `npm start` or reading a Lambda's log gets to see.
 */
export function parseStageConfig(value: unknown): StageConfig {
  const result = stageConfig.safeParse(value ?? {});
  if (!result.success) {
    throw invalidConfig(zodIssues(result.error.issues, "(config)", stageConfig));
  }
  const config = result.data;
  const problems: Issue[] = [];
  for (const [action, role] of Object.entries(config.permissions)) {
    if (role !== undefined && !isKnownRole(config, role)) {
      problems.push({
        path: `permissions.${action}`,
        message: `"${role}" is not one of roles (${config.roles.join(", ")})`,
      });
    }
  }
  config.approvals.rules.forEach((rule, index) => {
    for (const role of rule.roles ?? []) {
      if (!isKnownRole(config, role)) {
        problems.push({
          path: `approvals.rules.${index}.roles`,
          message: `"${role}" is not one of roles (${config.roles.join(", ")})`,
        });
      }
    }
  });
  problems.push(...oauthConfigProblems(config.auth?.oauth, config));
  problems.push(...connectionsConfigProblems(config.connections));
  config.search?.synonyms?.forEach((group, g) => {
    group.forEach((member, m) => {
      const problem = conceptMemberProblem(member);
      if (problem)
        problems.push({ path: `search.synonyms.${g}.${m}`, message: `"${member}" ${problem}` });
    });
  });
  if (!config.modes.available.includes(config.modes.default)) {
    problems.push({
      path: "modes.default",
      message: `"${config.modes.default}" is not one of modes.available (${config.modes.available.join(", ")})`,
    });
  }
  if (problems.length > 0) throw invalidConfig(problems);
  return config;
}

/**
 * Each tool's settings (`tools.<id>`) against the tools this process serves: a key that names
 * no tool, or settings its tool refuses, stop the start instead of failing calls later.
 */
export function checkToolSettings(
  config: StageConfig,
  tools: ReadonlyMap<
    string,
    { settings?: z.ZodType | undefined; spec?: { credentials?: { provider: string } | undefined } }
  >,
): void {
  const problems: Issue[] = [];
  // Whose account a tool acts with is chosen only for tools that can act as their caller.
  for (const [id, mode] of Object.entries(config.connections?.credentials ?? {})) {
    const provider = tools.get(id)?.spec?.credentials?.provider;
    if (!provider) {
      problems.push({
        path: `connections.credentials.${id}`,
        message: tools.has(id) ? "this tool does not act with a provider account" : "no such tool",
      });
    } else if (mode === "user" && !config.connections?.providers[provider]) {
      problems.push({
        path: `connections.credentials.${id}`,
        message: `acts as its caller at ${provider}, which connections.providers does not configure`,
      });
    }
  }
  for (const [id, settings] of Object.entries(config.tools)) {
    const tool = tools.get(id);
    if (!tool) {
      const meant = nearest(id, tools.keys());
      problems.push({
        path: `tools.${id}`,
        message: meant ? `no such tool; did you mean "${meant}"?` : "no such tool",
      });
      continue;
    }
    const parsed = (tool.settings ?? z.strictObject({})).safeParse(settings);
    if (!parsed.success) {
      for (const issue of zodIssues(parsed.error.issues, "(settings)", tool.settings)) {
        const at = issue.path === "(settings)" ? "" : `.${issue.path}`;
        problems.push({ path: `tools.${id}${at}`, message: issue.message });
      }
    }
  }
  if (problems.length > 0) throw invalidConfig(problems);
}

function invalidConfig(details: Issue[]): ValidationError {
  const lines = details.map((issue) => `  ${issue.path}: ${issue.message}`);
  return new ValidationError(`The stage configuration is not valid:\n${lines.join("\n")}`, {
    details,
  });
}

/** Where the stage configuration came from: for messages, and for `npm start`'s banner. */
export interface StageConfigSource {
  /** The JSON as given, parsed but not validated (`{}` when nothing is set). */
  value: unknown;
  /** `TOOLBUS_CONFIG`, `TOOLBUS_CONFIG_FILE (<path>)`, or `defaults`. */
  source: string;
}

/**
 * The stage configuration as given, read the same way by `npm start` and on Lambda: the JSON
 * in TOOLBUS_CONFIG, or the file TOOLBUS_CONFIG_FILE names. Setting both is an error naming
 * both, rather than a rule about which one silently wins.
 */
export function readStageConfigSource(env: NodeJS.ProcessEnv = process.env): StageConfigSource {
  const inline = env.TOOLBUS_CONFIG;
  const file = env.TOOLBUS_CONFIG_FILE;
  if (inline && file) {
    throw new ValidationError(
      `Both TOOLBUS_CONFIG and TOOLBUS_CONFIG_FILE (${file}) are set: set one of them.`,
      { details: [{ path: "TOOLBUS_CONFIG_FILE", message: "set together with TOOLBUS_CONFIG" }] },
    );
  }
  if (!inline && !file) return { value: {}, source: "defaults" };
  const source = inline ? "TOOLBUS_CONFIG" : `TOOLBUS_CONFIG_FILE (${file})`;
  let text = inline;
  if (file) {
    try {
      text = readFileSync(file, "utf8");
    } catch (cause) {
      throw new ValidationError(`${source} cannot be read: ${(cause as Error).message}`, {
        cause,
      });
    }
  }
  try {
    return { value: JSON.parse(text ?? ""), source };
  } catch (cause) {
    throw new ValidationError(`The stage configuration in ${source} is not valid JSON.`, {
      cause,
    });
  }
}

/**
 * A configuration as given, for the stage it runs as (`npm start --stage`, `sst deploy
 * --stage`): a `stage` of its own must be that one, an absent one is filled in. Something
 * other than an object is left for the schema to refuse.
 */
export function forStage(value: unknown, stage: string): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const declared = (value as { stage?: unknown }).stage;
  if (declared !== undefined && declared !== stage) {
    throw invalidConfig([
      { path: "stage", message: `is "${String(declared)}" but this stage is "${stage}"` },
    ]);
  }
  return { ...value, stage };
}

/** The stage configuration from the environment (readStageConfigSource), validated. */
export function loadStageConfig(env: NodeJS.ProcessEnv = process.env): StageConfig {
  return parseStageConfigFrom(readStageConfigSource(env));
}

/** Validates a configuration as given, its problems naming where it came from. */
export function parseStageConfigFrom({ value, source }: StageConfigSource): StageConfig {
  try {
    return parseStageConfig(value);
  } catch (error) {
    if (error instanceof ValidationError && source !== "defaults") {
      throw new ValidationError(
        error.message.replace("configuration", `configuration (${source})`),
        {
          details: error.details,
          cause: error,
        },
      );
    }
    throw error;
  }
}
