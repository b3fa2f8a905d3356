import { readFileSync } from "node:fs";
import { z } from "zod";
import { ValidationError, zodIssues } from "./errors";

/**
 * Per-stage configuration. Modes, roles and tool settings are configuration, not code, so a
 * stage can differ without a deploy of new code. It arrives as JSON in TOOLBUS_CONFIG (or a
 * file named by TOOLBUS_CONFIG_FILE) and is validated here, once, at start-up.
 */
export const stageConfig = z.object({
  stage: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/)
    .default("local"),
  /** Roles from least to most privileged; a key's role must be one of them. */
  roles: z.array(z.string().min(1)).min(1).default(["viewer", "member", "admin"]),
  /** Which role may do what: read the catalog, call tools, administer. */
  permissions: z
    .object({ read: z.string(), call: z.string(), admin: z.string() })
    .default({ read: "viewer", call: "member", admin: "admin" }),
  modes: z
    .object({ default: z.string().min(1), available: z.array(z.string().min(1)).min(1) })
    .default({ default: "default", available: ["default"] }),
  calls: z
    .object({
      /** `wait` when the request gives none, and its cap, in seconds. */
      defaultWaitSeconds: z.number().min(0).max(60).default(5),
      maxWaitSeconds: z.number().min(0).max(60).default(25),
    })
    .default({ defaultWaitSeconds: 5, maxWaitSeconds: 25 }),
  outbound: z
    .object({
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
    })
    .default({
      userAgent: "Toolbus/0.1 (+https://github.com/toolbus)",
      allowHosts: [],
      defaultTimeoutMs: 10_000,
      defaultMaxBytes: 2 * 1024 * 1024,
      networkEnabled: true,
    }),
  /** Each tool's own settings, validated by the tool's settings schema. */
  tools: z.record(z.string(), z.unknown()).default({}),
});
export type StageConfig = z.infer<typeof stageConfig>;

export function parseStageConfig(value: unknown): StageConfig {
  const result = stageConfig.safeParse(value ?? {});
  if (!result.success) {
    throw new ValidationError("The stage configuration is not valid.", {
      details: zodIssues(result.error.issues, "(config)"),
    });
  }
  const config = result.data;
  for (const role of Object.values(config.permissions)) {
    if (!config.roles.includes(role)) {
      throw new ValidationError(`The stage configuration names an unknown role: ${role}.`);
    }
  }
  if (!config.modes.available.includes(config.modes.default)) {
    throw new ValidationError(`The default mode ${config.modes.default} is not an available mode.`);
  }
  return config;
}

export function loadStageConfig(env: NodeJS.ProcessEnv = process.env): StageConfig {
  const file = env.TOOLBUS_CONFIG_FILE;
  const text = env.TOOLBUS_CONFIG ?? (file ? readFileSync(file, "utf8") : undefined);
  let value: unknown = {};
  if (text) {
    try {
      value = JSON.parse(text);
    } catch (cause) {
      throw new ValidationError("The stage configuration is not valid JSON.", { cause });
    }
  }
  return parseStageConfig(value);
}

/** True when `role` is at least `minimum` in the stage's role order. */
export function roleAtLeast(config: StageConfig, role: string, minimum: string): boolean {
  const have = config.roles.indexOf(role);
  const need = config.roles.indexOf(minimum);
  return have >= 0 && need >= 0 && have >= need;
}
