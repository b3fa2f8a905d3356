import {
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type InputRequiredResult,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { mayActFor } from "@toolbus/core/app/access";
import type { CallOutcome } from "@toolbus/core/app/calls/service";
import { callOfTaskId, taskIdOf, taskStatusOf, taskSupportOf } from "@toolbus/core/app/calls/tasks";
import { ConflictError, ValidationError } from "@toolbus/core/errors";
import type { CallChannel, CallKey } from "@toolbus/core/ports";
import type { CallRecord, Principal } from "@toolbus/wire/model/call";
import type { AttachedCaller, RelayRequest } from "@toolbus/wire/model/relay";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import * as z from "zod";
import { callRelay, declared, roundNames } from "./relayed-call";
import {
  callIdsOf,
  inputIssues,
  type McpDeps,
  type McpRequestContext,
  protocolError,
} from "./request-context";
import { callToolResult, invalidInputResult } from "./results";
import { toolInput } from "./tools";

/*
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on 2026-07-28. A task IS
 * a Toolbus call (core's calls/tasks.ts): `tools/call` records the call and answers with the
 * task before the tool is done, `tasks/get` reads the call record, `tasks/cancel` cancels the
 * call, and what a registered server asks during the call waits in the call's relay (issue
 * 38's channel) until `tasks/get` shows it and `tasks/update` answers it. Nothing is kept per
 * session: every request says for itself whether it speaks the extension.
 */

/** The extension's identifier, in client and server capabilities alike. */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * How long a task-capable call is given before it is answered with a task. What it does in
 * that time is answered synchronously, as the extension asks: a result (the immediate-result
 * shortcut), or a server's questions as an `input_required` round ("MRTR exchanges that come
 * before task creation SHOULD be resolved synchronously"). Short, so a task is still answered
 * at once; long enough for a server that asks first to be heard before the task exists.
 */
const SETTLE_SECONDS = 0.5;

/** How often a client is told to poll `tasks/get`. */
const POLL_INTERVAL_MS = 1_000;

/** Whether this request declared the extension in its own `_meta` capabilities. */
export function declaresTasks(ctx: ServerContext): boolean {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const capabilities = envelope[CLIENT_CAPABILITIES_META_KEY] as
    | { extensions?: Record<string, unknown> }
    | undefined;
  const extension = capabilities?.extensions?.[TASKS_EXTENSION];
  return extension !== null && typeof extension === "object";
}

/** -32021 with the shape the extension's schema requires: which capability is missing. */
function missingExtension(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    // The SDK's ClientCapabilities type predates extensions; the wire shape is the spec's.
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } as never },
    `${what} needs the ${TASKS_EXTENSION} extension: declare it in this request's _meta clientCapabilities.`,
  );
}

/**
 * A `tools/call` on 2026-07-28 for a tool that may or must run as a task: answered with a task
 * when the request declared the extension, refused with -32021 when the tool runs only as a
 * task and it did not. Undefined: the ordinary synchronous path answers (no such tool, a tool
 * that never runs as a task, or an optional one without the extension).
 */
export async function modernTaskCall(
  deps: McpDeps,
  context: McpRequestContext,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  ctx: ServerContext,
): Promise<CallToolResult | InputRequiredResult | TaskAnswer | undefined> {
  const spec = await deps.catalog.getTool(params.name);
  if (!spec) return undefined;
  const support = taskSupportOf(spec);
  if (support === "forbidden") return undefined;
  if (!declaresTasks(ctx)) {
    if (support !== "required") return undefined;
    // A tool hidden from this caller stays unknown to it: the ordinary path says so.
    try {
      deps.selection.authorizeCall(context.principal, spec, context.mode);
    } catch {
      return undefined;
    }
    throw missingExtension(`${spec.id} runs only as a task, which`);
  }
  const { calls } = deps;
  const meta = params._meta;
  const relay = await callRelay(deps.relay, context, ctx, "modern");
  // A retried round (a server asked before the task existed) continues the call it names.
  const { runId, callId } = callIdsOf(context, meta, relay?.resumes);
  try {
    const call = () =>
      calls.call(
        context.principal,
        runId,
        {
          tool: spec.id,
          input: toolInput(spec, params.arguments),
          callId,
          mode: context.mode,
          wait: SETTLE_SECONDS,
        },
        typeof meta?.traceparent === "string" ? meta.traceparent : undefined,
      );
    let outcome: CallOutcome;
    try {
      if (!relay) {
        outcome = await call();
      } else {
        const key = { parentRunId: runId, callId };
        // A call that becomes a task keeps its caller attached: what the server asks from
        // then on waits for the caller's tasks/get instead of being refused.
        const relayed = await relay.run(key, call, (done) => !done.finished);
        if ("asked" in relayed) return relay.ask(key, relayed.asked);
        outcome = relayed.done;
      }
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return invalidInputResult(spec, { runId, callId }, error.message, inputIssues(error.details));
    }
    if (outcome.finished) {
      // Done within the settling time: the result itself, as the synchronous path gives it.
      const upstream = outcome.call.result?.failure?.mcpError;
      if (upstream) {
        throw new ProtocolError(
          upstream.code,
          outcome.call.result?.failure?.message ?? "",
          upstream.data,
        );
      }
      return callToolResult(outcome.call, spec);
    }
    return { resultType: "task", ...taskOf(outcome.call, undefined) };
  } catch (error) {
    throw protocolError(error, context, { runId, callId });
  }
}

/** The extension's Task status: a tool's own error is `completed`, as its result says. */
type ModernStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** The extension's flat Task, as `tools/call` creates it and `tasks/get` details it. */
interface Task {
  [key: string]: unknown;
  taskId: string;
  status: ModernStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs: number;
}

/** A CreateTaskResult: `resultType: "task"` and the task, flat. */
export type TaskAnswer = Task & { resultType: "task" };

/**
 * A call as the extension's Task. Only a server's own JSON-RPC error is `failed`; a tool that
 * answered `isError` (or a call Toolbus ended: a timeout, an unreachable server) completed
 * with an error result, exactly as the synchronous path answers it.
 */
function taskOf(call: CallRecord, asked: readonly RelayRequest[] | undefined): Task {
  const status = taskStatusOf(call);
  const failure = call.result?.failure;
  const modern: ModernStatus =
    status === "failed" && !failure?.mcpError
      ? "completed"
      : status === "working" && asked && asked.length > 0
        ? "input_required"
        : status;
  return {
    taskId: taskIdOf(call),
    status: modern,
    ...(modern === "failed" && failure ? { statusMessage: failure.message } : {}),
    createdAt: call.scheduledAt,
    lastUpdatedAt:
      call.result?.completedAt ?? call.cancelRequestedAt ?? call.startedAt ?? call.scheduledAt,
    // Call records are kept: a task never expires.
    ttlMs: null,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

const taskParams = z.object({ taskId: z.string() }).passthrough();
// The SDK lifts `inputResponses` out of params into the request context (as for a retried
// tools/call); a body that still carries them is read the same.
const updateParams = z
  .object({ taskId: z.string(), inputResponses: z.record(z.string(), z.unknown()).optional() })
  .passthrough();

/**
 * `tasks/get`, `tasks/update` and `tasks/cancel`, registered in the SDK's schema form (the only
 * way it dispatches them on 2026-07-28). `tasks/result` and `tasks/list` are gone in the
 * extension and stay unregistered: -32601.
 */
export function registerModernTasks(
  server: Server,
  deps: McpDeps,
  context: McpRequestContext,
): void {
  const { calls } = deps;
  const channel = deps.relay?.channel;

  /** The call a task id names, when this caller may see it; -32602 for any other. */
  const ownCall = async (taskId: string, ctx: ServerContext, method: string) => {
    if (!declaresTasks(ctx)) throw missingExtension(method);
    const ids = callOfTaskId(taskId);
    const call = ids ? await calls.get(ids.runId, ids.callId) : undefined;
    // Someone else's task is no different from one that does not exist.
    if (!call || !mayActFor(deps.config, context.principal, call.requestedBy)) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task: ${taskId}.`);
    }
    return call;
  };

  server.setRequestHandler("tasks/get", { params: taskParams }, async ({ taskId }, ctx) => {
    try {
      const call = await ownCall(taskId, ctx, "tasks/get");
      const finished = call.status === "succeeded" || call.status === "failed";
      const asked =
        !finished && channel && isOwner(call, context.principal)
          ? await waitingRequests(channel, call, context.principal, ctx)
          : [];
      const task = taskOf(call, asked);
      const detail: Record<string, unknown> = {};
      if (task.status === "input_required") {
        const named = roundNames(asked);
        detail.inputRequests = Object.fromEntries(
          asked.map((request) => [
            named.get(request.id) as string,
            { method: request.method, params: request.params },
          ]),
        );
      } else if (task.status === "completed") {
        const spec = await deps.catalog.getTool(call.toolId);
        // A tool removed since still has its result: without its output schema.
        detail.result = callToolResult(call, spec ?? ({ id: call.toolId } as ToolSpec));
      } else if (task.status === "failed" && call.result?.failure?.mcpError) {
        const { message, mcpError } = call.result.failure;
        detail.error = {
          code: mcpError.code,
          message,
          ...(mcpError.data === undefined ? {} : { data: mcpError.data }),
        };
      }
      return { resultType: "complete", ...task, ...detail };
    } catch (error) {
      throw protocolError(error, context);
    }
  });

  server.setRequestHandler(
    "tasks/update",
    { params: updateParams },
    async ({ taskId, inputResponses: inParams }, ctx) => {
      try {
        const inputResponses: Record<string, unknown> = ctx.mcpReq.inputResponses ?? inParams ?? {};
        const call = await ownCall(taskId, ctx, "tasks/update");
        const finished = call.status === "succeeded" || call.status === "failed";
        if (!finished && channel && isOwner(call, context.principal)) {
          const asked = await waitingRequests(channel, call, context.principal, ctx);
          const named = roundNames(asked);
          const key = keyOf(call);
          for (const request of asked) {
            const response = inputResponses[named.get(request.id) as string];
            // Keys not outstanding are ignored, as the extension asks; so is a malformed one.
            if (response === null || typeof response !== "object" || Array.isArray(response)) {
              continue;
            }
            await channel.answer(key, request.id, context.principal.id, {
              result: response as Record<string, unknown>,
            });
          }
        }
        // Eventually consistent: the task moves on as the call takes the answers.
        return { resultType: "complete" };
      } catch (error) {
        throw protocolError(error, context);
      }
    },
  );

  server.setRequestHandler("tasks/cancel", { params: taskParams }, async ({ taskId }, ctx) => {
    try {
      const call = await ownCall(taskId, ctx, "tasks/cancel");
      try {
        await calls.cancel(context.principal, { runId: call.parentRunId, callId: call.callId });
      } catch (error) {
        // A task already over is acknowledged all the same (the suite's idempotent ack).
        if (!(error instanceof ConflictError)) throw error;
      }
      // What the call still asked of its caller is refused: nobody will answer it now.
      if (channel && isOwner(call, context.principal)) {
        const attachment = await channel.attach(keyOf(call), callerFor(context.principal, ctx));
        await attachment.close({ gone: true });
      }
      return { resultType: "complete" };
    } catch (error) {
      throw protocolError(error, context);
    }
  });
}

function keyOf(call: CallRecord): CallKey {
  return { parentRunId: call.parentRunId, callId: call.callId };
}

/** Only the caller that made the call is attached to it (an administrator only reads it). */
function isOwner(call: CallRecord, principal: Principal): boolean {
  return call.requestedBy.id === principal.id;
}

/** The task's caller as this request declares it. */
function callerFor(principal: Principal, ctx: ServerContext): AttachedCaller {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  return {
    principalId: principal.id,
    era: "modern",
    capabilities: declared(envelope[CLIENT_CAPABILITIES_META_KEY]),
    // Nobody reads a task's messages: it has no stream to send them on.
    progress: false,
  };
}

/**
 * The requests the call's server made of its caller that are still unanswered, read by
 * attaching to the call for a moment. The caller stays attached (it polls), so what the call
 * asks next keeps waiting for it; it keeps the capabilities it attached with first, since a
 * poll need not repeat them.
 */
async function waitingRequests(
  channel: CallChannel,
  call: CallRecord,
  principal: Principal,
  ctx: ServerContext,
): Promise<RelayRequest[]> {
  const key = keyOf(call);
  const current = await channel.caller(key);
  const caller = current?.principalId === principal.id ? current : callerFor(principal, ctx);
  const attachment = await channel.attach(key, caller);
  const stop = new AbortController();
  // Stopped before it starts: what waits now is read once, and nothing more is waited for.
  stop.abort();
  const asked: RelayRequest[] = [];
  try {
    for await (const event of attachment.events(stop.signal)) {
      if (event.type === "request") asked.push(event.request);
    }
  } finally {
    await attachment.close({ gone: false });
  }
  return asked;
}
