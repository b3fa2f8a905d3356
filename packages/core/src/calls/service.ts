import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { StageConfig } from "../config";
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from "../errors";
import type { EventPublisher } from "../events/publisher";
import { schemaIssues } from "../external/json-schema";
import { expandUrlTemplate } from "../external/url-template";
import type { CallRecord, Principal } from "../model/call";
import { scheduledEventKey, type ToolCallScheduled } from "../model/events";
import { runId as runIdSchema } from "../model/ids";
import type { ToolSpec } from "../model/tool";
import { type ExclusionReason, select } from "../selection/select";
import type { CallStore, CatalogStore } from "../store/ports";
import type { AnyToolDefinition } from "../tool-definition";
import { canonicalJson, sha256Hex } from "../util/canonical-json";
import type { CallRequest } from "./request";

export interface CallServiceDeps {
  catalog: CatalogStore;
  calls: CallStore;
  publisher: EventPublisher;
  config: StageConfig;
  /**
   * Built-in tools by id: their zod schemas validate input before anything is written.
   * Registered (http, mcp) tools are validated against the JSON Schema in their catalog entry.
   */
  definitions: ReadonlyMap<string, AnyToolDefinition>;
  now?: () => Date;
}

const TERMINAL = new Set(["succeeded", "failed"]);

/** The API side of the call lifecycle: validate, record once, announce, and wait. */
export class CallService {
  private readonly now: () => Date;

  constructor(private readonly deps: CallServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * Records the call (conditional put) and publishes ToolCallScheduled. A retry with the same
   * call id and input returns the existing call; a still-pending one is announced again (the
   * same event key, so consumers dedupe), which also recovers a call whose first publish
   * failed. The same id with other input is a conflict.
   */
  async schedule(
    principal: Principal,
    parentRunId: string,
    request: CallRequest,
  ): Promise<{ call: CallRecord; created: boolean }> {
    if (!runIdSchema.safeParse(parentRunId).success) {
      throw new ValidationError("The run id must be 1-128 characters: letters, digits, . _ : -");
    }
    const spec = (await this.deps.catalog.getTool(request.tool)) ?? notFound(request.tool);
    const mode = this.authorize(principal, spec, request.mode);
    const issues = this.inputIssues(spec, request.input);
    if (issues.length > 0) {
      throw new ValidationError(`The input does not match ${spec.id}'s input schema.`, {
        details: issues,
      });
    }
    const record: CallRecord = {
      parentRunId,
      callId: request.callId ?? randomUUID(),
      toolId: spec.id,
      toolset: spec.toolset,
      toolVersion: spec.version,
      implementation: spec.implementation.kind,
      input: request.input,
      inputHash: sha256Hex(canonicalJson(request.input)),
      status: "pending",
      mode,
      requestedBy: principal,
      scheduledAt: this.now().toISOString(),
      ...(request.parentCallId ? { parentCallId: request.parentCallId } : {}),
    };
    const outcome = await this.deps.calls.create(record);
    if (!outcome.created && outcome.call.inputHash !== record.inputHash) {
      throw new ConflictError(
        `Call ${record.callId} already exists in run ${parentRunId} with a different input.`,
      );
    }
    if (outcome.created || outcome.call.status === "pending") {
      await this.deps.publisher.publish([
        { detailType: "ToolCallScheduled", detail: scheduledDetail(outcome.call) },
      ]);
    }
    return outcome;
  }

  /**
   * Built-in tools check input with their zod schema; registered ones with their JSON Schema
   * (and, for http tools, whether the values can stand in the URL), with the same 400.
   */
  private inputIssues(spec: ToolSpec, input: unknown): { path: string; message: string }[] {
    const implementation = spec.implementation;
    if (implementation.kind === "builtin") {
      const definition = this.deps.definitions.get(spec.id) ?? notFound(spec.id);
      const parsed = definition.input.safeParse(input);
      return parsed.success ? [] : issueDetails(parsed.error.issues);
    }
    const issues = schemaIssues(spec.inputSchema, input);
    if (issues.length > 0 || implementation.kind !== "http") return issues;
    try {
      expandUrlTemplate(implementation.url, input as Record<string, unknown>);
      return [];
    } catch (error) {
      return [{ path: "(input)", message: (error as Error).message }];
    }
  }

  /**
   * The same selection as `POST /v1/select`, for this principal and mode; returns the mode.
   * Capabilities are left out on purpose: a call to a tool whose capability is missing is
   * still scheduled, and the runtime fails it as `unavailable` or runs its fallback.
   */
  private authorize(principal: Principal, spec: ToolSpec, requestedMode?: string): string {
    const { mode, excluded } = select({
      config: this.deps.config,
      tools: [spec],
      role: principal.role,
      mode: requestedMode,
      capabilities: [],
    });
    const reasons = (excluded[0]?.reasons ?? []).filter((reason) => BLOCKING.has(reason));
    if (reasons.length > 0) {
      const why = reasons.map((reason) => blockingReasonText(reason, spec, mode)).join("; ");
      throw new ForbiddenError(`Tool ${spec.id} cannot be called: ${why}.`, {
        details: { reasons },
      });
    }
    return mode;
  }

  get(parentRunId: string, callId: string): Promise<CallRecord | undefined> {
    return this.deps.calls.get(parentRunId, callId);
  }

  /** Polls the call until it finishes or `waitSeconds` pass (capped by configuration). */
  async waitForResult(
    parentRunId: string,
    callId: string,
    waitSeconds: number,
  ): Promise<CallRecord> {
    const cap = Math.min(waitSeconds, this.deps.config.calls.maxWaitSeconds);
    const deadline = Date.now() + cap * 1000;
    // Most calls finish within tens of milliseconds: poll early and often, then settle at a
    // rate that keeps reads cheap for long-running tools.
    let delay = 5;
    for (;;) {
      const call = await this.deps.calls.get(parentRunId, callId);
      if (!call) throw new NotFoundError(`Call ${callId} does not exist in run ${parentRunId}.`);
      if (TERMINAL.has(call.status) || Date.now() >= deadline) return call;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, deadline - Date.now())));
      delay = Math.min(delay * 1.5, 50);
    }
  }
}

/** One entry per failing path; an unknown field is named by its own path, not its parent's. */
function issueDetails(issues: readonly z.core.$ZodIssue[]) {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: [...at, key].join("."), message: "unknown field" }));
    }
    return [{ path: at.join(".") || "(input)", message: issue.message }];
  });
}

/** Exclusions that refuse a call; capability ones do not (see `authorize`). */
const BLOCKING = new Set<ExclusionReason>(["disabled", "mode", "role"]);

function blockingReasonText(reason: ExclusionReason, spec: ToolSpec, mode: string): string {
  if (reason === "disabled") return "it is disabled on this stage";
  if (reason === "mode") return `it is not offered in mode ${mode}`;
  return `it needs the ${spec.availability.minRole} role or higher`;
}

function notFound(tool: string): never {
  throw new NotFoundError(`Tool ${tool} does not exist.`);
}

function scheduledDetail(call: CallRecord): ToolCallScheduled & { [key: string]: unknown } {
  return {
    eventKey: scheduledEventKey(call.parentRunId, call.callId),
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    ...(call.implementation ? { implementation: call.implementation } : {}),
    input: call.input,
    requestedBy: call.requestedBy,
    scheduledAt: call.scheduledAt,
    ...(call.mode ? { mode: call.mode } : {}),
    ...(call.parentCallId ? { parentCallId: call.parentCallId } : {}),
  };
}
