import { Validator } from "@cfworker/json-schema";
import {
  type CacheHint,
  type CallToolResult,
  type InputRequiredResult,
  type jsonSchemaValidator,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type Server,
} from "@modelcontextprotocol/server";
import { hasPermission, type Permission, requiredRole } from "@toolbus/core/app/access";
import type { CallOutcome } from "@toolbus/core/app/calls/service";
import { ValidationError } from "@toolbus/core/errors";
import { sha256Hex } from "@toolbus/core/util/canonical-json";
import { CALL_TOOL, SEARCH_TOOLS } from "@toolbus/wire/mcp-surface";
import type { Principal } from "@toolbus/wire/model/call";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import { API_VERSION } from "../common/version";
import {
  type ConnectionCaller,
  connectionCaller,
  connectionRequiredAnswer,
} from "./connection-required";
import { federate } from "./federated";
import { ReadableParamsServer } from "./params";
import { type CallRelay, callRelay, roundCodec } from "./relayed-call";
import {
  callIdsOf,
  inputIssues,
  type McpDeps,
  type McpRequestContext,
  protocolError,
} from "./request-context";
import { callToolResult, invalidInputResult } from "./results";
import { callToolArguments, SEARCH_SURFACE_TOOLS, searchToolsResult } from "./search-surface";
import { type CallIds, type LegacyTasks, registerLegacyTasks } from "./tasks-legacy";
import { modernTaskCall, registerModernTasks, TASKS_EXTENSION } from "./tasks-modern";
import { toMcpTool, toolInput } from "./tools";

export {
  CALL_ID_META,
  type McpDeps,
  type McpRequestContext,
  RUN_ID_META,
} from "./request-context";

/** Where a `tools/list` result says which version of the caller's list it is. */
const LIST_VERSION_META = "toolbus/listVersion";

/**
 * The SDK's default is Ajv, which the bundles leave out (see `stacks/bundling.ts`); the
 * server only validates with it what it asks a client for, which Toolbus never does. The
 * JSON Schema validator the registered tools already use stands in.
 */
const SCHEMA_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: object) {
    const validator = new Validator(schema as ConstructorParameters<typeof Validator>[0]);
    return (input: unknown) => {
      const { valid, errors } = validator.validate(input);
      return valid
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: errors.map((e) => e.error).join("; ") };
    };
  },
};

/** A `tools/call` answer: the call's result, or (2026-07-28) what the caller must answer first. */
type ToolAnswer = CallToolResult | InputRequiredResult;

/** Which protocol generation a request speaks: 2025-11-25 and before, or 2026-07-28. */
export type McpEra = "legacy" | "modern";

/** The same for every caller and request: a client may keep it an hour, and share it. */
const CONSTANT: CacheHint = { ttlMs: 3_600_000, cacheScope: "public" };

/**
 * An MCP server for one request (stateless: nothing outlives the request, so it runs the same
 * on Lambda). Tools come from the catalog at request time with their stored JSON Schemas,
 * which is why this uses the low-level `Server` rather than `McpServer` (zod schemas only).
 */
export function createMcpServer(deps: McpDeps, context: McpRequestContext, era: McpEra): Server {
  const modern = era === "modern";
  // The registered servers' prompts and resources, on the catalog surface; the search surface
  // stays the same two tools for everyone.
  const federation = context.surface === "catalog" ? deps.federation : undefined;
  // Lists made for this caller from live servers are private, kept as long as `tools/list`.
  const federatedHint: CacheHint = {
    ttlMs: deps.config.mcp.toolsListTtlSeconds * 1000,
    cacheScope: "private",
  };
  const listHint = federation ? federatedHint : CONSTANT;
  const server = new ReadableParamsServer(
    { name: "toolbus", title: "Toolbus", version: API_VERSION },
    {
      // 2026-07-28 clients ask every server for its lists (the `caching` rules): prompts and
      // resources are always offered there (empty without federation); 2025 clients see them
      // when the registered servers' are federated, with completions, and logging (whose
      // level is accepted and answered empty: stateless, Toolbus keeps none, and a call's log
      // messages reach the caller on the call's own stream, see relayed-call.ts).
      capabilities: {
        tools: { listChanged: false },
        ...(modern || federation
          ? {
              prompts: {},
              resources: federation && !modern && deps.subscriptions ? { subscribe: true } : {},
            }
          : {}),
        ...(federation ? { completions: {} } : {}),
        ...(federation && !modern ? { logging: {} } : {}),
        // The Tasks extension (tasks-modern.ts): 2026-07-28 only, never `tasks` itself there.
        ...(modern ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
      },
      instructions:
        "Optional tools: use one when it clearly helps with the task, and carry on without it " +
        "when it does not or when it fails.",
      jsonSchemaValidator: SCHEMA_VALIDATOR,
      cacheHints: {
        "server/discover": CONSTANT,
        "prompts/list": listHint,
        "resources/list": listHint,
        "resources/templates/list": listHint,
        ...(federation ? { "resources/read": federatedHint } : {}),
      },
      // A 2026-07-28 round's state names the call it continues, sealed and bound to the
      // caller (relayed-call.ts); without the relay Toolbus hands out none, so any is forged.
      requestState: {
        verify: (state, ctx) => {
          if (!deps.relay) throw new Error("Toolbus issues no requestState here.");
          return roundCodec(deps.relay).verify(state, ctx);
        },
      },
    },
  );
  // Cache hints travel in 2026-07-28 results only; a 2025 result stays as it was.
  const hinted = <R extends object>(result: R, hint: CacheHint) =>
    modern ? { ...result, ...hint } : result;

  server.setRequestHandler("tools/list", async () => {
    requirePermission(deps, context.principal, "read");
    // The same two tools for everyone, whatever the catalog holds.
    if (context.surface === "search") return hinted({ tools: SEARCH_SURFACE_TOOLS }, CONSTANT);
    try {
      const {
        catalog,
        selection: { available },
      } = await deps.selection.select(context.principal, { mode: context.mode });
      // What a caller may use changes with the catalog, the capabilities, and its own key: a
      // client keeps the list only for itself, and only as long as the stage says. The list's
      // version (the catalog's, and what this caller may use of it) shows when it changed.
      const version = sha256Hex(
        `${catalog.version}\n${available.map((tool) => tool.id).join("\n")}`,
      ).slice(0, 16);
      return hinted(
        {
          // 2025-11-25 tools say whether they run as tasks; 2026-07-28's Tool has no `execution`.
          tools: available.map((spec) => toMcpTool(spec, { tasks: !modern })),
          _meta: { [LIST_VERSION_META]: version },
        },
        { ttlMs: deps.config.mcp.toolsListTtlSeconds * 1000, cacheScope: "private" },
      );
    } catch (error) {
      throw protocolError(error, context);
    }
  });

  if (federation) {
    federate(server, federation, {
      caller: context,
      era,
      ...(deps.relay ? { relay: deps.relay } : {}),
      ...(deps.subscriptions ? { subscriptions: deps.subscriptions } : {}),
      allowed: (permission) => requirePermission(deps, context.principal, permission),
      failure: (error) => protocolError(error, context),
    });
  } else if (modern) {
    server.setRequestHandler("prompts/list", async () => ({ prompts: [] }));
    server.setRequestHandler("resources/list", async () => ({ resources: [] }));
    server.setRequestHandler("resources/templates/list", async () => ({ resourceTemplates: [] }));
    server.setRequestHandler("resources/read", async (request) => {
      throw new ResourceNotFoundError(request.params.uri);
    });
  }

  if (modern) registerModernTasks(server, deps, context);
  // 2025-11-25 tasks and cancellation (tasks-legacy.ts).
  const legacyTasks: LegacyTasks | undefined = modern
    ? undefined
    : registerLegacyTasks(server, deps, context, {
        idsOf: (meta) => callIdsOf(context, meta),
        mayCall: () => requirePermission(deps, context.principal, "call"),
        failure: (error, call) => protocolError(error, context, call),
      });

  server.setRequestHandler("tools/call", async (request, ctx): Promise<ToolAnswer> => {
    const { name, arguments: args, _meta } = request.params;
    // 2025-11-25: a task-augmented call is answered with its task (the tool's taskSupport
    // decides); a plain one runs where a notifications/cancelled for this request finds it.
    const created = await legacyTasks?.taskCall(request.params);
    if (created) return created;
    const inFlight = legacyTasks
      ? <T>(ids: CallIds, run: () => Promise<T>) => legacyTasks.inFlight(ctx.mcpReq.id, ids, run)
      : undefined;
    if (context.surface === "search" && name === SEARCH_TOOLS) {
      requirePermission(deps, context.principal, "read");
      try {
        return await searchToolsResult(deps.search, context, args);
      } catch (error) {
        throw protocolError(error, context);
      }
    }
    requirePermission(deps, context.principal, "call");
    if (context.surface === "search") {
      // Exactly the two tools it lists: a catalog tool is reached through call_tool only.
      if (name !== CALL_TOOL)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}.`);
      const target = callToolArguments(args);
      if ("refused" in target) return target.refused;
      return callCatalogTool(deps, context, {
        name: target.tool,
        input: () => target.input,
        meta: _meta,
        again: `Call ${CALL_TOOL} again with the same arguments`,
        inputPath: "arguments",
        relay: () => callRelay(deps.relay, context, ctx, era),
        connect: connectionCaller(server, ctx, era, context.declared),
        inFlight,
      });
    }
    if (modern) {
      // A task-capable tool, for a caller that declared the Tasks extension (or must have).
      const task = await modernTaskCall(deps, context, request.params, ctx);
      if (task) return task as ToolAnswer;
    }
    return callCatalogTool(deps, context, {
      name,
      input: (spec) => toolInput(spec, args),
      meta: _meta,
      relay: () => callRelay(deps.relay, context, ctx, era),
      connect: connectionCaller(server, ctx, era, context.declared),
      inFlight,
    });
  });

  return server;
}

/**
 * One catalog tool called for the agent, by name: the same call path, selection, budgets and
 * events whichever surface it came through.
 */
async function callCatalogTool(
  deps: McpDeps,
  context: McpRequestContext,
  target: {
    name: string;
    /** The tool's input, from the arguments as this surface carries them. */
    input: (spec: ToolSpec) => unknown;
    meta: Record<string, unknown> | undefined;
    again?: string;
    /** Where the tool's input sits in the arguments, for the paths of its issues. */
    inputPath?: string;
    /** How the call reaches its caller while it runs (relayed-call.ts). */
    relay: () => Promise<CallRelay | undefined>;
    /** Runs the call where a cancel of this request finds it (2025-11-25, tasks-legacy.ts). */
    inFlight?: (<T>(ids: CallIds, run: () => Promise<T>) => Promise<T>) | undefined;
    /** How the caller can be sent to connect an account a call needs (connection-required.ts). */
    connect?: ConnectionCaller;
  },
): Promise<ToolAnswer> {
  const { meta } = target;
  const relay = await target.relay();
  // A retried 2026-07-28 round continues the call its sealed state names.
  const { runId, callId, named } = callIdsOf(context, meta, relay?.resumes);
  try {
    const spec = await deps.catalog.getTool(target.name);
    if (!spec)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${target.name}.`);
    let outcome: CallOutcome;
    const place = () =>
      deps.calls.call(
        context.principal,
        runId,
        {
          tool: spec.id,
          input: target.input(spec),
          callId,
          mode: context.mode,
          // An MCP client holds the request open for the result: the longest wait the stage
          // allows; one still running comes back with its id to call again.
          wait: deps.config.calls.maxWaitSeconds,
        },
        // W3C trace context in `_meta`, as MCP clients that trace send it.
        typeof meta?.traceparent === "string" ? meta.traceparent : undefined,
      );
    const call = () => (target.inFlight ? target.inFlight({ runId, callId }, place) : place());
    try {
      if (!relay) {
        outcome = await call();
      } else {
        const key = { parentRunId: runId, callId };
        const relayed = await relay.run(key, call);
        // The server asked the caller something: the call waits while the caller answers.
        if ("asked" in relayed) return relay.ask(key, relayed.asked);
        outcome = relayed.done;
      }
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return invalidInputResult(
        spec,
        { runId, callId },
        error.message,
        inputIssues(error.details),
        target.inputPath,
      );
    }
    // A server's own JSON-RPC error reaches an MCP caller as the server sent it (a missing
    // client capability stays -32021, HTTP 400 on 2026-07-28), not as a failed result.
    const upstream = outcome.call.result?.failure?.mcpError;
    if (outcome.finished && upstream) {
      throw new ProtocolError(
        upstream.code,
        outcome.call.result?.failure?.message ?? "",
        upstream.data,
      );
    }
    // A missing connection: the caller's person is sent to connect it, where the caller can be.
    const connect = target.connect
      ? connectionRequiredAnswer(outcome.call, { ...target.connect, againRunsNew: !named })
      : undefined;
    if (connect instanceof ProtocolError) throw connect;
    if (connect) return connect;
    return callToolResult(outcome.call, spec, target.again);
  } catch (error) {
    throw protocolError(error, context, { runId, callId });
  }
}

/** The REST routes' rule (app/access.ts), refused in JSON-RPC's shape. */
function requirePermission(deps: McpDeps, principal: Principal, permission: Permission): void {
  if (!hasPermission(deps.config, principal, permission)) {
    const required = requiredRole(deps.config, permission);
    const what = permission === "call" ? "Calling tools" : "Listing tools";
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      `${what} needs the ${required} role or higher.`,
      {
        code: "forbidden",
        requiredRole: required,
      },
    );
  }
}
