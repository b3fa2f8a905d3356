import type { Citation, Failure } from "@toolbus/wire/model/call";
import type { ContentBlock } from "@toolbus/wire/model/content";
import { type ToolPolicy, toolPolicy } from "@toolbus/wire/model/policy";
import type {
  AttachedCaller,
  RelayAnswer,
  RelayedMethod,
  RelayNotification,
} from "@toolbus/wire/model/relay";
import { type ToolSpec, type ToolSpecInput, toolSpec } from "@toolbus/wire/model/tool";
import * as z from "zod";
import type { CapabilityDetector } from "./app/capabilities/detectors";
import type { ConnectionTokens } from "./connections/service";
import type { Deployment } from "./deployment";
import { ToolbusError } from "./errors";
import type { HttpClient, OutboundConfig, SecretSource } from "./outbound/types";

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
  /**
   * Reports how far the call is: `progress` out of `total` (when known), with a short note.
   * Announced as ToolCallProgress, throttled; safe to call often, and a no-op where nothing
   * listens. Never fails the call.
   */
  progress(progress: number, total?: number, message?: string): void;
  /**
   * The live MCP caller waiting for the call, if any: what a registered MCP server asks of its
   * client goes to it, and its log messages. Without one, requests are refused at once.
   */
  caller: ToolCaller;
}

/** A call's live caller, as a tool reaches it (requests end with the tool's timeout). */
export interface ToolCaller {
  describe(): Promise<AttachedCaller | undefined>;
  /** `key`: the server's own name for the request, shown to the caller where it can be. */
  ask(method: RelayedMethod, params: Record<string, unknown>, key?: string): Promise<RelayAnswer>;
  tell(message: RelayNotification): void;
}

export interface ToolOutcome<O> {
  /** Text for a model to read. */
  output: string;
  /** Structured result; checked against the tool's output schema before it is stored. */
  data: O;
  citations?: Citation[];
  /** MCP content blocks to pass on as they are (a registered MCP server's images, files). */
  content?: ContentBlock[];
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
  /**
   * What it runs with besides itself, in its own function and wherever else it runs. A
   * definition without it (one a test or an embedding composes) has no function of its own and
   * runs with its composition's detectors, tools and network client.
   */
  needs?: ToolNeeds;
  execute(input: I, context: ToolContext<S>): Promise<ToolOutcome<O>>;
}

/**
 * A tool's own declaration of what it runs with. References, not flags, on purpose: a tool's
 * function is bundled from its definition, so it carries the detectors, fallback, outbound
 * client and secrets reader named here, and nothing another tool needs.
 */
export interface ToolNeeds {
  /**
   * Detectors of the capabilities its run checks: those its spec `requires`, and the one named
   * after it if it has one (whether it has anything to serve in another tool's place).
   */
  detectors: readonly CapabilityDetector[];
  /** The tool its spec names as `fallback`: it answers in this one's place, in its function. */
  fallback?: AnyToolDefinition;
  /**
   * How it reaches the network when its spec requires `network`: core's guarded client
   * (`createHttpClient`). Without it every request it makes fails as blocked.
   */
  network?: (config: OutboundConfig) => HttpClient;
  /**
   * Loads the secrets its function binds (its spec's setup secrets) before a call: core's
   * `loadFunctionSecrets`. A function that binds none carries no SSM reader.
   */
  secrets?: () => Promise<unknown>;
  /**
   * Callers' connected accounts, for a tool that can act as its caller (its spec's
   * `credentials`): core's `connectionsOf`. A function without it carries no token vault or
   * KMS client.
   */
  connections?: ConnectionsMaker;
}

/** Makes a deployment's connected accounts, reaching providers with `http`; undefined where none is configured. */
export type ConnectionsMaker = (
  deployment: Deployment,
  http: HttpClient,
) => ConnectionTokens | undefined;

/** A tool that declares what it runs with, so it can have a function of its own. */
export type DeployableTool = AnyToolDefinition & { needs: ToolNeeds };

/**
 * What a tool's function runs with by its declaration, joined with its fallback's: the
 * fallback runs in the tool's function, so that function has the fallback's detectors,
 * network and secrets too.
 */
export function toolScope({ detectors, fallback, network, secrets, connections }: ToolNeeds) {
  const its = fallback?.needs;
  return {
    capabilities: its ? [...detectors, ...its.detectors] : detectors,
    fallbacks: fallback ? [fallback] : [],
    network: network ?? its?.network,
    secrets: secrets ?? its?.secrets,
    connections: connections ?? its?.connections,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type.
export type AnyToolDefinition = ToolDefinition<any, any, any>;

/**
 * Identity at runtime; gives `execute` its parameter types from the schemas, and keeps a
 * declared `needs` in the type, so a tool's function can be built from the definition alone.
 */
export function defineTool<I, O, S = undefined>(
  definition: ToolDefinition<I, O, S> & { needs: ToolNeeds },
): ToolDefinition<I, O, S> & { needs: ToolNeeds };
export function defineTool<I, O, S = undefined>(
  definition: ToolDefinition<I, O, S>,
): ToolDefinition<I, O, S>;
export function defineTool<I, O, S>(definition: ToolDefinition<I, O, S>): ToolDefinition<I, O, S> {
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
