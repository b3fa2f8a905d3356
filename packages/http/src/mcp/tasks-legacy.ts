import {
  type CallToolResult,
  type ListTasksResult,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type RequestId,
  type Server,
  type Task,
} from "@modelcontextprotocol/server";
import { mayActFor } from "@toolbus/core/app/access";
import type { CallService } from "@toolbus/core/app/calls/service";
import { decideUrl, isFinished, statusUrl } from "@toolbus/core/app/calls/status";
import {
  callOfTaskId,
  LONGEST_REQUEST_MS,
  taskIdOf,
  taskStatusOf,
  taskSupportOf,
} from "@toolbus/core/app/calls/tasks";
import type { StageConfig } from "@toolbus/core/config";
import { ConflictError, ToolbusError } from "@toolbus/core/errors";
import type { CatalogStore, TaskIndex } from "@toolbus/core/ports";
import type { CallRecord, Principal } from "@toolbus/wire/model/call";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import * as z from "zod";
import { callToolResult, META } from "./results";
import { toolInput } from "./tools";

/**
 * MCP 2025-11-25 tasks (the spec's experimental `tasks` utility) on Toolbus calls: a task is
 * the call record (app/calls/tasks.ts), created durably before `tools/call` answers, so any
 * instance answers `tasks/get`, `tasks/result` and `tasks/cancel` from the store. Only
 * `tasks/list` needs more: the caller's tasks, by key (TaskIndex). Also here: MCP
 * cancellation (`notifications/cancelled`) of a plain `tools/call` still running.
 */

/** The most of an unknown task id an error repeats. */
const MAX_SHOWN_ID = 200;
/** The ttl a task gets when it asks for none, ms: how long it stays on `tasks/list`. */
export const DEFAULT_TASK_TTL_MS = 3_600_000;
/** The longest ttl granted (a week); a longer one asked for is cut to it. */
export const MAX_TASK_TTL_MS = 7 * 24 * 3_600_000;
/** The shortest ttl granted: a task listed for less would be gone before it is polled twice. */
const MIN_TASK_TTL_MS = 60_000;
/** How often a client should poll `tasks/get`, ms: a read of the call record each time. */
export const TASK_POLL_INTERVAL_MS = 1_000;
/** Tasks on one `tasks/list` page: each is a read of its call. */
const LIST_PAGE = 20;
/**
 * How long `tasks/cancel` waits for a running call to stop before it answers: a handler in
 * this process stops at once, one elsewhere reads the cancel on its record within a second
 * (CANCEL_POLL_MS). The spec wants the task `cancelled` before the answer; past this the
 * answer says the cancel was asked and the task is still `working`.
 */
const CANCEL_SETTLE_MS = 3_000;
/** Left of the longest request for answering it: `tasks/result` stops waiting this early. */
const ANSWER_MARGIN_MS = 60_000;
/** `tasks/result` polls the call every 50 ms at most for this long, then every second. */
const FAST_POLL_MS = 5_000;

/**
 * The v2 SDK types only 2026-07-28 methods, where `tasks/*` are gone: these methods are
 * registered with their params' schemas (the 2025-11-25 wire still checks the requests).
 */
const taskParams = z.object({ taskId: z.string() });
const listParams = z.object({ cursor: z.string().optional() });

/** What the tasks read and call; McpDeps has it all. */
export interface LegacyTaskDeps {
  config: StageConfig;
  catalog: Pick<CatalogStore, "getTool">;
  calls: Pick<CallService, "call" | "get" | "cancel">;
  taskIndex?: TaskIndex;
  /** `buffered`: answers reach the caller only once they end (API Gateway, ~30 s at most). */
  relay?: { buffered?: boolean };
}

/** Who asks; McpRequestContext has it all. */
export interface LegacyTaskCaller {
  principal: Principal;
  mode: string;
  surface: "catalog" | "search";
  logFailure(error: unknown): void;
}

/** The sync `tools/call` path's own rules, so a task is the same call a plain call would be. */
export interface LegacyTaskHooks {
  /**
   * The run and call a request's `_meta` (or the request's headers) names, as `tools/call`
   * chooses them; `named` says whether the caller named the call (else the id is new).
   */
  idsOf(meta: Record<string, unknown> | undefined): CallIds & { named: boolean };
  /** Throws unless the caller may call tools (the REST rule, as JSON-RPC). */
  mayCall(): void;
  /** An error as the JSON-RPC error `tools/call` answers with. */
  failure(error: unknown, call?: CallIds): ProtocolError;
}

export interface CallIds {
  runId: string;
  callId: string;
}

/** The `tools/call` params a task reads. */
interface CallParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  task?: { ttl?: number | undefined } | undefined;
  _meta?: Record<string, unknown> | undefined;
}

/** What `tools/call` asks of the tasks: a task for a task-augmented call, or nothing. */
export interface LegacyTasks {
  /**
   * A CreateTaskResult for a task-augmented call; undefined for a plain call the sync path
   * answers. Refuses (-32601) a task where the tool forbids one and a plain call where it
   * requires one.
   */
  taskCall(params: CallParams): Promise<CallToolResult | undefined>;
  /** Runs one plain `tools/call`, reachable by `notifications/cancelled` while it runs. */
  inFlight<T>(requestId: RequestId, ids: CallIds, run: () => Promise<T>): Promise<T>;
}

/**
 * Serves 2025-11-25 tasks on this (legacy-era) server: the capability, `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel` and `notifications/cancelled`. Called before
 * the server connects; `tools/call` hands task-augmented calls to what it returns.
 */
export function registerLegacyTasks(
  server: Server,
  deps: LegacyTaskDeps,
  caller: LegacyTaskCaller,
  hooks: LegacyTaskHooks,
): LegacyTasks {
  server.registerCapabilities({
    tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
  });
  const { principal } = caller;
  const tracked = inFlightCalls(deps);

  /** The call a task id names, for a caller who may see it; -32602 otherwise, alike. */
  const readable = async (taskId: string): Promise<CallRecord> => {
    const ids = callOfTaskId(taskId);
    let call: CallRecord | undefined;
    try {
      call = ids ? await deps.calls.get(ids.runId, ids.callId) : undefined;
    } catch (error) {
      throw hooks.failure(error, ids);
    }
    // Another key's task is answered as if it did not exist: its id tells nothing.
    if (!call || !mayActFor(deps.config, principal, call.requestedBy)) {
      // Named back only as far as a task id of ours goes: the rest is the caller's noise.
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown task: ${taskId.slice(0, MAX_SHOWN_ID)}.`,
      );
    }
    return call;
  };

  /** The ttl the task was given; the default for a call its index no longer lists. */
  const ttlOf = async (call: CallRecord): Promise<number> => {
    const entry = await deps.taskIndex
      ?.get(call.requestedBy.id, {
        createdAt: call.scheduledAt,
        runId: call.parentRunId,
        callId: call.callId,
      })
      .catch((error: unknown) => {
        // The ttl is only reported: a failed read answers the default, and is logged.
        caller.logFailure(error);
        return undefined;
      });
    return entry?.ttlMs ?? DEFAULT_TASK_TTL_MS;
  };

  server.setRequestHandler("tasks/get", { params: taskParams }, async ({ taskId }) => {
    const call = await readable(taskId);
    return taskOf(call, await ttlOf(call));
  });

  server.setRequestHandler("tasks/result", { params: taskParams }, async ({ taskId }, ctx) => {
    const call = await settle(
      deps,
      await readable(taskId),
      resultHoldMs(deps),
      ctx.mcpReq.signal,
    ).catch((error: unknown) => {
      throw hooks.failure(error);
    });
    if (!isFinished(call)) {
      throw new ProtocolError(
        ProtocolErrorCode.InternalError,
        `Task ${taskId} is still ${taskStatusOf(call)}; call tasks/result again to keep waiting, or poll tasks/get.`,
        { code: "still_running", retryable: true, taskId, status: taskStatusOf(call) },
      );
    }
    // The task's last status, on the answer's stream ahead of its result (where the caller
    // reads one: a JSON answer has nowhere to carry it, and the result says as much).
    await ctx.mcpReq
      .notify({ method: "notifications/tasks/status", params: taskOf(call, await ttlOf(call)) })
      .catch(() => undefined);
    // A registered server's own JSON-RPC error is the task's error, as on the sync path.
    const upstream = call.result?.failure?.mcpError;
    if (upstream) {
      throw new ProtocolError(upstream.code, call.result?.failure?.message ?? "", upstream.data);
    }
    const result = callToolResult(call, await specOf(deps, call));
    return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });

  server.setRequestHandler(
    "tasks/list",
    { params: listParams },
    async ({ cursor }): Promise<ListTasksResult> => {
      const index = deps.taskIndex;
      if (!index) return { tasks: [] };
      const after = cursor === undefined ? undefined : positionOf(cursor);
      try {
        const page = await index.list(principal.id, {
          limit: LIST_PAGE,
          ...(after === undefined ? {} : { after }),
        });
        const calls = await Promise.all(
          page.tasks.map((entry) => deps.calls.get(entry.runId, entry.callId)),
        );
        const tasks = page.tasks.flatMap((entry, i) => {
          const call = calls[i];
          return call ? [taskOf(call, entry.ttlMs)] : [];
        });
        return { tasks, ...(page.next ? { nextCursor: cursorOf(page.next) } : {}) };
      } catch (error) {
        // The store refuses a position it did not hand out: a forged cursor.
        if (error instanceof ToolbusError && error.status === 400) throw invalidCursor();
        throw hooks.failure(error);
      }
    },
  );

  server.setRequestHandler("tasks/cancel", { params: taskParams }, async ({ taskId }, ctx) => {
    const call = await readable(taskId);
    if (isFinished(call)) throw alreadyTerminal(taskId, call);
    const ids = { runId: call.parentRunId, callId: call.callId };
    let cancelled: CallRecord;
    try {
      const done = await deps.calls.cancel(principal, ids);
      // Stopped before it started: `cancelled` now. Running: its handler is asked to stop;
      // the answer waits a moment for it, so it usually says `cancelled` already.
      cancelled =
        done.outcome === "cancelled"
          ? done.call
          : await settle(deps, done.call, CANCEL_SETTLE_MS, ctx.mcpReq.signal);
    } catch (error) {
      // It finished between the read and the cancel: it stays as it finished.
      if (error instanceof ConflictError) {
        throw alreadyTerminal(taskId, (await deps.calls.get(ids.runId, ids.callId)) ?? call);
      }
      throw hooks.failure(error, ids);
    }
    return taskOf(cancelled, await ttlOf(cancelled));
  });

  // The SDK's own handler aborts requests of this server instance; a stateless server's
  // notification arrives on a POST of its own, so the call is found by what it names.
  server.setNotificationHandler("notifications/cancelled", async (notification) => {
    const { requestId, _meta } = notification.params;
    const ids = requestId === undefined ? undefined : tracked.only(principal.id, requestId);
    let target: CallIds | undefined = ids;
    if (!target) {
      try {
        const named = hooks.idsOf(_meta);
        if (named.named) target = named;
      } catch {
        // Malformed ids in a notification: nothing to answer, nothing to cancel.
      }
    }
    if (!target) return;
    try {
      await deps.calls.cancel(principal, target);
    } catch (error) {
      // Finished already, unknown, or another key's: a notification has no answer to carry it.
      if (!(error instanceof ToolbusError && error.status < 500)) caller.logFailure(error);
    }
  });

  return {
    async taskCall(params) {
      if (caller.surface === "search") {
        // search_tools and call_tool are plain tools (no `execution`): never tasks.
        if (params.task) throw notAsTask(params.name);
        return undefined;
      }
      hooks.mayCall();
      let spec: ToolSpec | undefined;
      try {
        spec = await deps.catalog.getTool(params.name);
      } catch (error) {
        throw hooks.failure(error);
      }
      // An unknown tool is answered by the sync path, as it always was.
      if (!spec) return undefined;
      const support = taskSupportOf(spec);
      if (!params.task) {
        if (support !== "required") return undefined;
        throw new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `${spec.id} runs only as a task (execution.taskSupport "required"): call it with params.task.`,
        );
      }
      if (support === "forbidden") throw notAsTask(spec.id);
      return createTask(deps, caller, hooks, spec, params);
    },
    inFlight: (requestId, ids, run) => tracked.during(principal.id, requestId, ids, run),
  };
}

/**
 * Places the call without waiting for it (`wait: 0`): recorded, announced and started, then
 * answered with its task. Listed for the caller (best effort: the task exists either way).
 */
async function createTask(
  deps: LegacyTaskDeps,
  caller: LegacyTaskCaller,
  hooks: LegacyTaskHooks,
  spec: ToolSpec,
  params: CallParams,
): Promise<CallToolResult> {
  const { named: _, ...ids } = hooks.idsOf(params._meta);
  const ttlMs = grantedTtl(params.task?.ttl);
  let call: CallRecord;
  try {
    const outcome = await deps.calls.call(
      caller.principal,
      ids.runId,
      {
        tool: spec.id,
        input: toolInput(spec, params.arguments),
        callId: ids.callId,
        mode: caller.mode,
        wait: 0,
      },
      typeof params._meta?.traceparent === "string" ? params._meta.traceparent : undefined,
    );
    call = outcome.call;
  } catch (error) {
    // Input that does not match is -32602 naming each path (protocolError keeps the issues):
    // a client that asked for a task cannot read a tool result instead.
    throw hooks.failure(error, ids);
  }
  await deps.taskIndex
    ?.add(caller.principal.id, {
      runId: call.parentRunId,
      callId: call.callId,
      createdAt: call.scheduledAt,
      ttlMs,
    })
    .catch((error: unknown) => caller.logFailure(error));
  // `content: []`: the SDK checks every tools/call answer as a CallToolResult and refuses a
  // `task` without `content`; a Result may carry more fields, and clients read `task`.
  return {
    task: taskOf(call, ttlMs),
    content: [],
    _meta: {
      [META.runId]: call.parentRunId,
      [META.callId]: call.callId,
      [META.statusUrl]: statusUrl(call),
    },
  };
}

/** A call as a 2025-11-25 Task. */
export function taskOf(call: CallRecord, ttlMs: number): Task {
  const statusMessage = statusMessageOf(call);
  return {
    taskId: taskIdOf(call),
    status: taskStatusOf(call),
    ...(statusMessage ? { statusMessage } : {}),
    createdAt: call.scheduledAt,
    lastUpdatedAt: lastUpdatedAt(call),
    ttl: ttlMs,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

/** What a person reading the task should know: why it waits, how far it got, why it failed. */
function statusMessageOf(call: CallRecord): string | undefined {
  if (call.status === "awaiting_approval" && call.approval) {
    return (
      `Waiting for a person's approval until ${call.approval.expiresAt}; ` +
      `decided at POST ${decideUrl(call)} (or /deny).`
    );
  }
  if (call.status === "failed") return call.result?.failure?.message ?? call.result?.output;
  if (call.status === "succeeded") return undefined;
  if (call.cancelRequestedAt) {
    return `Cancellation requested at ${call.cancelRequestedAt}; the tool is being stopped.`;
  }
  if (call.status === "pending") return "Waiting to start.";
  return call.progress?.message;
}

/** The latest moment anything about the call changed, as far as its record tells. */
function lastUpdatedAt(call: CallRecord): string {
  const times = [
    call.scheduledAt,
    call.startedAt,
    call.approval?.decision?.at,
    call.progress?.reportedAt,
    call.cancelRequestedAt,
    call.result?.completedAt,
  ].filter((time): time is string => time !== undefined);
  // ISO 8601 in UTC from toISOString: the same width, so the greatest string is the latest.
  return times.sort().at(-1) ?? call.scheduledAt;
}

/** The requested ttl within bounds; the default when none was asked for. */
function grantedTtl(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested)) return DEFAULT_TASK_TTL_MS;
  return Math.min(MAX_TASK_TTL_MS, Math.max(MIN_TASK_TTL_MS, Math.round(requested)));
}

/**
 * How long `tasks/result` holds a request for its task to end: as long as the endpoint may
 * hold one (the streaming function's 15 minutes, less time to answer), or the stage's longest
 * wait where answers are buffered (API Gateway ends a request after about 30 s).
 */
function resultHoldMs(deps: LegacyTaskDeps): number {
  return deps.relay?.buffered
    ? deps.config.calls.maxWaitSeconds * 1000
    : LONGEST_REQUEST_MS - ANSWER_MARGIN_MS;
}

/**
 * Reads the call until it finishes, `holdMs` passes or the request is cancelled: often at
 * first (most calls end within moments), then once a second, to keep a long wait cheap.
 */
async function settle(
  deps: LegacyTaskDeps,
  known: CallRecord,
  holdMs: number,
  signal: AbortSignal,
): Promise<CallRecord> {
  const started = Date.now();
  const deadline = started + holdMs;
  let call = known;
  let delay = 5;
  while (!isFinished(call) && Date.now() < deadline && !signal.aborted) {
    await sleep(Math.min(delay, deadline - Date.now()));
    delay = Math.min(delay * 1.5, Date.now() - started < FAST_POLL_MS ? 50 : 1_000);
    call = (await deps.calls.get(call.parentRunId, call.callId)) ?? call;
  }
  return call;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The tool's spec, for the result's shape; a tool since removed answers without structure. */
async function specOf(deps: LegacyTaskDeps, call: CallRecord): Promise<ToolSpec> {
  const spec = await deps.catalog.getTool(call.toolId);
  // callToolResult reads the id, and the output schema only to shape structured content.
  return spec ?? ({ id: call.toolId } as ToolSpec);
}

/** The most a cursor may be: a page position (under 300 characters) in base64url. */
const MAX_CURSOR = 512;

function cursorOf(position: string): string {
  return Buffer.from(position, "utf8").toString("base64url");
}

/** A cursor's page position; -32602 for anything this server did not hand out. */
function positionOf(cursor: string): string {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw invalidCursor();
  }
  return Buffer.from(cursor, "base64url").toString("utf8");
}

function invalidCursor(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid cursor for tasks/list.");
}

function notAsTask(tool: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.MethodNotFound,
    `${tool} cannot run as a task (execution.taskSupport "forbidden"): call it without params.task.`,
  );
}

function alreadyTerminal(taskId: string, call: CallRecord): ProtocolError {
  const status = taskStatusOf(call);
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Cannot cancel task ${taskId}: already in terminal status ${status}.`,
    { status },
  );
}

/**
 * The plain `tools/call` requests running in this process, by caller and JSON-RPC id, so a
 * `notifications/cancelled` (a POST of its own, maybe on another connection) finds its call.
 * Request ids are unique per client connection, not per key: when two of a key's clients
 * have the same id in flight, the notification names neither for sure, and cancels neither.
 */
class InFlightCalls {
  readonly #calls = new Map<string, CallIds[]>();

  async during<T>(
    principalId: string,
    requestId: RequestId,
    ids: CallIds,
    run: () => Promise<T>,
  ): Promise<T> {
    const key = keyOf(principalId, requestId);
    const list = this.#calls.get(key) ?? [];
    list.push(ids);
    this.#calls.set(key, list);
    try {
      return await run();
    } finally {
      const left = (this.#calls.get(key) ?? []).filter((held) => held !== ids);
      if (left.length > 0) this.#calls.set(key, left);
      else this.#calls.delete(key);
    }
  }

  /** The one call this caller's request id names here; undefined when none, or not one. */
  only(principalId: string, requestId: RequestId): CallIds | undefined {
    const list = this.#calls.get(keyOf(principalId, requestId));
    return list?.length === 1 ? list[0] : undefined;
  }
}

const keyOf = (principalId: string, requestId: RequestId) =>
  `${principalId}\n${typeof requestId}:${String(requestId)}`;

/** One registry per stage composition (its call service), shared by every request it serves. */
const registries = new WeakMap<object, InFlightCalls>();

function inFlightCalls(deps: LegacyTaskDeps): InFlightCalls {
  let registry = registries.get(deps.calls);
  if (!registry) {
    registry = new InFlightCalls();
    registries.set(deps.calls, registry);
  }
  return registry;
}
