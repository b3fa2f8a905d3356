import * as z from "zod";
import { ToolbusError } from "./errors";
import type { Citation, Failure } from "./model/call";
import { type ToolPolicy, toolPolicy } from "./model/policy";
import { type ToolSpec, type ToolSpecInput, toolSpec } from "./model/tool";
import type { HttpClient, SecretSource } from "./outbound/types";

export interface ToolContext<S> {
  callId: string;
  parentRunId: string;
  /** Aborted when the tool's timeout passes: pass it to every outbound request. */
  signal: AbortSignal;
  /** This tool's settings from the stage configuration, validated by its settings schema. */
  settings: S;
  /** The only way to reach the network: timeouts, size caps, retries and the SSRF guard. */
  http: HttpClient;
  /** Secret values by name (GITHUB_TOKEN, ...). Never put them in output, errors or logs. */
  secret: SecretSource;
  now(): Date;
}

export interface ToolOutcome<O> {
  /** Text for a model to read. */
  output: string;
  /** Structured result; checked against the tool's output schema before it is stored. */
  data: O;
  citations?: Citation[];
}

/** A tool in code: its catalog metadata, zod schemas and the function that runs it. */
export interface ToolDefinition<I = unknown, O = unknown, S = unknown> {
  spec: Omit<ToolSpecInput, "inputSchema" | "outputSchema">;
  input: z.ZodType<I>;
  output: z.ZodType<O>;
  /** Schema of the tool's section in the stage configuration (`tools.<id>`). */
  settings?: z.ZodType<S>;
  /**
   * The whole catalog entry, for tools defined by data rather than code (registered http and
   * mcp tools): their schemas are JSON Schema already, not zod to convert.
   */
  catalogSpec?: ToolSpec;
  execute(input: I, context: ToolContext<S>): Promise<ToolOutcome<O>>;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type.
export type AnyToolDefinition = ToolDefinition<any, any, any>;

/** Identity at runtime; gives `execute` its parameter types from the schemas. */
export function defineTool<I, O, S = undefined>(
  definition: ToolDefinition<I, O, S>,
): ToolDefinition<I, O, S> {
  return definition;
}

/** The catalog entry of a tool in code: its zod schemas published as JSON Schema. */
export function toolSpecOf(definition: AnyToolDefinition): ToolSpec {
  if (definition.catalogSpec) return definition.catalogSpec;
  return toolSpec.parse({
    ...definition.spec,
    inputSchema: z.toJSONSchema(definition.input, { io: "input" }),
    outputSchema: z.toJSONSchema(definition.output, { io: "output" }),
  });
}

const policies = new WeakMap<AnyToolDefinition, ToolPolicy>();

/**
 * What running a tool reads of its spec (capabilities, cache, rate limits, timeout,
 * fallback, version), defaults applied, once per definition. Not `toolSpecOf`: a tool's
 * function never publishes its catalog entry, so it neither converts its schemas to JSON
 * Schema nor loads the catalog's schemas.
 */
export function toolPolicyOf(definition: AnyToolDefinition): ToolPolicy {
  let policy = policies.get(definition);
  if (!policy) {
    policy = definition.catalogSpec ?? toolPolicy.parse(definition.spec);
    policies.set(definition, policy);
  }
  return policy;
}

/**
 * Thrown by a tool to fail with a kind an agent can act on. Anything else a tool throws
 * becomes an `internal` failure with a generic message.
 */
export class ToolFailure extends ToolbusError {
  override name = "ToolFailure";
  readonly failure: Failure;

  constructor(failure: Failure, options: { cause?: unknown } = {}) {
    super(failure.message, options);
    this.failure = failure;
  }
}
