import { randomUUID } from "node:crypto";
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import type { CallService } from "@toolbus/core/app/calls/service";
import type { McpFederation } from "@toolbus/core/app/federation/service";
import type { SearchService } from "@toolbus/core/app/search/service";
import type { SelectionService } from "@toolbus/core/app/selection/service";
import type { StageConfig } from "@toolbus/core/config";
import { callerMessage, type Issue, ToolbusError } from "@toolbus/core/errors";
import type { CatalogStore, McpSubscriptions, TaskIndex } from "@toolbus/core/ports";
import { sha256Hex } from "@toolbus/core/util/canonical-json";
import type { McpSurface } from "@toolbus/wire/mcp-surface";
import type { Principal } from "@toolbus/wire/model/call";
import { callId as callIdSchema, runId as runIdSchema } from "@toolbus/wire/model/ids";
import type { RelayCapabilities } from "@toolbus/wire/model/relay";
import type { McpRelay, StreamWriter } from "./relayed-call";

/*
 * What every MCP request handler shares: who the request is for, what the server reads and
 * calls, which run and call a tools/call names, and how errors become JSON-RPC errors. Apart
 * from server.ts so the tasks modules use it without importing the server that registers them.
 */

/** Where a `tools/call` may name its call id: `params._meta["toolbus/callId"]`. */
export const CALL_ID_META = "toolbus/callId";
/** Where a `tools/call` may name its run: `params._meta["toolbus/runId"]`. */
export const RUN_ID_META = "toolbus/runId";

/** What one MCP request is made on behalf of; the route reads it from the HTTP request. */
export interface McpRequestContext {
  principal: Principal;
  /** Already resolved against the stage's modes. */
  mode: string;
  /**
   * From `X-Toolbus-Run-Id`: the run this request's calls belong to; `_meta` wins over it.
   * Without either, see `runOf`.
   */
  runId?: string;
  /** From `X-Toolbus-Call-Id`; `_meta` wins over it. */
  callId?: string;
  /** `catalog`: every tool the selection offers; `search`: `search_tools` and `call_tool` only. */
  surface: McpSurface;
  /** Records an unexpected failure; the caller only ever sees a generic message. */
  logFailure(error: unknown): void;
  /**
   * Writes on this answer's event stream (2025-11-25, when the caller reads one): how a
   * registered server's requests reach the caller mid-call. Absent for a JSON answer.
   */
  write?: StreamWriter;
  /** Fires when the caller of a streamed answer hangs up (with `write`). */
  hungUp?: AbortSignal;
  /**
   * What a 2025-11-25 (or older) caller declared in its `initialize`, as the session id
   * Toolbus gave it then carries it (session-id.ts). Absent when it sent none that reads.
   */
  declared?: RelayCapabilities;
}

/** What the server reads and calls; the route builds it once for every request. */
export interface McpDeps {
  config: StageConfig;
  catalog: Pick<CatalogStore, "getTool">;
  calls: Pick<CallService, "call" | "get" | "cancel">;
  /** The MCP tasks each caller made (2025-11-25 `tasks/list`); without it none is listed. */
  taskIndex?: TaskIndex;
  selection: SelectionService;
  search: SearchService;
  /**
   * Prompts, resources and completions of the registered MCP servers the caller may use;
   * without it the prompts and resources lists are empty (2026-07-28) or absent (2025-11-25).
   */
  federation?: McpFederation;
  /** Resource subscriptions (2025-11-25, with the federation): without them, none are offered. */
  subscriptions?: McpSubscriptions;
  /**
   * The relay between running calls and the caller waiting on `/mcp`: their progress, log
   * messages and servers' requests. Without it nothing reaches the caller mid-call.
   */
  relay?: McpRelay;
}

/**
 * The run a call belongs to: the one the client names (`_meta`, then the header), else, for a
 * call it names, a run derived from its key and that call id, so a stateless client that
 * repeats the call (after an approval, or when its wait ran out) reaches the same call
 * without keeping anything but the call id; else a new run.
 */
export function runOf(
  context: McpRequestContext,
  named: string | undefined,
  callId: string | undefined,
): string {
  const chosen = named ?? context.runId;
  if (chosen !== undefined) return chosen;
  if (callId === undefined) return `mcp-${randomUUID()}`;
  return `mcp-${sha256Hex(`${context.principal.id}\n${callId}`).slice(0, 32)}`;
}

/**
 * The run and call a `tools/call` is for: a retried 2026-07-28 round's (its sealed state names
 * them), else what the client names (`_meta`, then the headers), else a new call id in the run
 * `runOf` gives. `named` says whether the caller named the call.
 */
export function callIdsOf(
  context: McpRequestContext,
  meta: Record<string, unknown> | undefined,
  resumes?: { runId: string; callId: string } | undefined,
): { runId: string; callId: string; named: boolean } {
  if (resumes) return { runId: resumes.runId, callId: resumes.callId, named: true };
  const named = idFrom(meta, CALL_ID_META) ?? context.callId;
  return {
    runId: runOf(context, idFrom(meta, RUN_ID_META, runIdSchema), named),
    callId: named ?? randomUUID(),
    named: named !== undefined,
  };
}

/** An id a client put in `_meta` under `key`: valid, or a protocol error saying what is. */
export function idFrom(
  meta: Record<string, unknown> | undefined,
  key: typeof CALL_ID_META | typeof RUN_ID_META,
  schema: typeof callIdSchema | typeof runIdSchema = callIdSchema,
): string | undefined {
  const value = meta?.[key];
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `_meta "${key}" must be 1-128 characters: letters, digits, . _ : -`,
    );
  }
  return parsed.data;
}

/**
 * Errors as JSON-RPC errors. A refusal written for callers (unknown tool, not offered in this
 * mode or to this role, a call id reused with other input) keeps its words and code; anything
 * unexpected is logged and answered with a generic message, so nothing internal leaks.
 */
export function protocolError(
  error: unknown,
  context: McpRequestContext,
  call?: { runId: string; callId: string },
): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof ToolbusError && error.status < 500) {
    return new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, {
      code: error.code,
      ...(error.details === undefined ? {} : { details: error.details }),
    });
  }
  if (error instanceof ToolbusError && error.status === 503) {
    return new ProtocolError(ProtocolErrorCode.InternalError, callerMessage(error), {
      code: error.code,
      retryable: true,
      ...(call ?? {}),
    });
  }
  context.logFailure(error);
  return new ProtocolError(
    ProtocolErrorCode.InternalError,
    "Something went wrong on our side; retry later.",
    {
      code: "internal",
    },
  );
}

export function inputIssues(details: unknown): Issue[] {
  if (!Array.isArray(details)) return [];
  return details.filter(
    (detail): detail is Issue =>
      typeof detail?.path === "string" && typeof detail?.message === "string",
  );
}
