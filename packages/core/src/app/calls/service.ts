import { randomUUID } from "node:crypto";
import type { CallRecord, Failure, Principal } from "@toolbus/wire/model/call";
import { runId as runIdSchema } from "@toolbus/wire/model/ids";
import type { RunBudget } from "@toolbus/wire/model/run";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import type { CallRequest } from "@toolbus/wire/schemas/calls";
import type { StageConfig } from "../../config";
import { ConflictError, type Issue, NotFoundError, ValidationError, zodIssues } from "../../errors";
import { callFields, loggedInput } from "../../observability/calls";
import type { Logger } from "../../observability/log";
import { newTrace, parseTraceparent } from "../../observability/trace-context";
import type { CallStore, CatalogStore, EventLog, EventSink } from "../../ports";
import type { AnyToolDefinition } from "../../tool-definition";
import { inputHashOf } from "../../util/canonical-json";
import { handlerIdFor } from "../../wiring";
import type { RunGovernor } from "../runs/governor";
import type { SelectionService } from "../selection/service";
import { storeCounted } from "./counted";
import { type Dispatcher, DispatchNotStartedError, dispatchFailureReporter } from "./dispatch";
import {
  announceApprovalRequested,
  announceFinishedCall,
  announceScheduled,
  type CancelOutcome,
  callStart,
  cancelCall,
  decideApproval,
  initialStatus,
  type RunningCalls,
  refusedCall,
  releasedCall,
  scheduledDetail,
  scheduledEnvelope,
} from "./lifecycle";
import { isFinished, statusUrl } from "./status";

export interface CallServiceDeps {
  catalog: CatalogStore;
  calls: CallStore;
  /** Where calls are announced. */
  bus: EventSink;
  /** The run logs: a refused call's events are logged here at once (announce.ts). */
  runLog?: Pick<EventLog, "append">;
  config: StageConfig;
  /**
   * Built-in tools by id: their zod schemas validate input before anything is written.
   * Registered (http, mcp) tools are validated against the JSON Schema in their catalog entry.
   */
  definitions: ReadonlyMap<string, AnyToolDefinition>;
  /**
   * Per-run budgets and the loop breaker, loaded on the first call; without it no run is
   * limited.
   */
  governor?: () => Promise<RunGovernor>;
  /** Who may call what: the same selection every surface uses. */
  selection: Pick<SelectionService, "authorizeCall" | "fallbackAccess">;
  /** Runs calls a caller waits for straight away; without it every call goes by the bus. */
  dispatcher?: Dispatcher;
  /** Where a call's first steps (accepted, dispatched) are logged; its handler logs the last. */
  log?: Logger;
  /** The calls running in this process: a cancel made here stops them at once. */
  running?: RunningCalls;
  now?: () => Date;
}

/** What `call` answers: the finished call, or one still under way with where to follow it. */
export type CallOutcome =
  | { finished: true; call: CallRecord }
  | { finished: false; call: CallRecord; statusUrl: string };

/**
 * The call lifecycle on the API side, for REST and MCP alike: validate, record once, announce,
 * run (directly when a caller waits, else by the bus) and wait.
 */
export class CallService {
  private readonly now: () => Date;
  private readonly reportFailure: (error: unknown) => void;

  constructor(private readonly deps: CallServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.reportFailure = dispatchFailureReporter(deps.log);
  }

  /**
   * Calls a tool under a run. `request.wait` (seconds; the stage's default when absent,
   * capped by its maximum) is how long the caller waits for the result. A caller who waits
   * has the call dispatched directly to the tool's handler; the call is persisted first,
   * announced on the bus all the same, and the bus rule leaves it to that handler.
   *
   * A retry with the same call id and input returns the existing call (a still-pending one
   * is announced again: the same event key, so consumers dedupe, and it recovers a call
   * whose first publish failed); the same id with other input is a conflict.
   */
  async call(
    principal: Principal,
    parentRunId: string,
    request: CallRequest,
    /** The caller's W3C `traceparent`; a malformed or absent one starts a new trace. */
    traceparent?: string,
  ): Promise<CallOutcome> {
    return this.place(principal, parentRunId, request, traceparent);
  }

  private async place(
    principal: Principal,
    parentRunId: string,
    request: CallRequest,
    traceparent: string | undefined,
  ): Promise<CallOutcome> {
    const { config, dispatcher } = this.deps;
    if (!runIdSchema.safeParse(parentRunId).success) {
      throw new ValidationError("The run id must be 1-128 characters: letters, digits, . _ : -");
    }
    const waitSeconds = Math.min(
      request.wait ?? config.calls.defaultWaitSeconds,
      config.calls.maxWaitSeconds,
    );
    const deadline = Date.now() + waitSeconds * 1000;
    const spec = (await this.deps.catalog.getTool(request.tool)) ?? notFound(request.tool);
    const mode = this.deps.selection.authorizeCall(principal, spec, request.mode);
    // Whether the tool's fallback may answer for this caller is decided here, once, and
    // recorded on the call: the runtime obeys it (absent: it may not).
    const fallback = spec.fallback ? await this.deps.catalog.getTool(spec.fallback) : undefined;
    const fallbackAccess = fallback
      ? this.deps.selection.fallbackAccess(principal, spec, fallback, mode)
      : undefined;
    const issues = await this.inputIssues(spec, request.input);
    if (issues.length > 0) {
      throw new ValidationError(`The input does not match ${spec.id}'s input schema.`, {
        details: issues,
      });
    }
    const now = this.now();
    const start = callStart(config, spec, principal, {
      waitSeconds,
      canDispatch: dispatcher !== undefined,
    });
    const record: CallRecord = {
      parentRunId,
      callId: request.callId ?? randomUUID(),
      toolId: spec.id,
      toolset: spec.toolset,
      toolVersion: spec.version,
      implementation: spec.implementation.kind,
      input: request.input,
      inputHash: inputHashOf(request.input),
      ...initialStatus(start, config, spec.timeoutMs, now),
      mode,
      requestedBy: principal,
      scheduledAt: now.toISOString(),
      ...(request.parentCallId ? { parentCallId: request.parentCallId } : {}),
      trace: parseTraceparent(traceparent) ?? newTrace(),
      ...(fallbackAccess ? { fallbackAccess } : {}),
    };
    const governor = await this.deps.governor?.();
    if (request.policy) {
      if (!governor) throw new ValidationError("This stage does not govern runs: no policy here.");
      await governor.setPolicy(parentRunId, request.policy);
    }
    const countable = {
      parentRunId,
      toolId: spec.id,
      inputHash: record.inputHash,
      cost: spec.cost,
      at: now,
    };
    // Only a call run here at once is counted while stored: stored so, it cannot run before
    // the count says it may, even if this process stops in between (the sweeper fails it).
    const together = start === "direct" && !request.policy && governor?.limitsEveryRun() === false;
    const stored = await storeCounted(this.deps, governor, countable, record, together);
    if (stored.outcome === "exists") return this.existing(stored.call, record, deadline);
    if (stored.outcome === "moved") return this.waitFor(record, deadline);
    if (stored.outcome === "refused") {
      const { failure, budget, made } = stored;
      return this.refuse(record, failure, budget, deadline, made);
    }
    this.logAccepted(record, start === "direct" ? "direct" : "bus");
    if (start === "approval") {
      // Nothing runs until a person decides: the caller gets the call's status URL at once.
      await announceApprovalRequested(this.deps.bus, record);
      return { finished: false, call: record, statusUrl: statusUrl(record) };
    }
    if (start === "bus" || !dispatcher) {
      await this.announce(record);
      return this.waitFor(record, deadline);
    }
    return this.dispatchDirectly(dispatcher, record, deadline);
  }

  /**
   * Records a call its run's policy refused as failed, and announces both its events like any
   * other call's: subscribers and the run's log see the refusal and why. Never run. `made`:
   * the call is stored already, with that status, and is written over.
   */
  private async refuse(
    record: CallRecord,
    failure: Failure,
    budget: RunBudget | undefined,
    deadline: number,
    made?: CallRecord["status"],
  ): Promise<CallOutcome> {
    const refused = refusedCall(record, failure, budget, this.now());
    if (made === undefined) {
      const outcome = await this.deps.calls.create(refused);
      if (!outcome.created) return this.existing(outcome.call, record, deadline);
    } else if (!(await this.deps.calls.rewrite(refused, made))) {
      // It moved on meanwhile (the sweeper failed it): that is how it ended.
      return this.waitFor(record, deadline);
    }
    this.logAccepted(refused, "bus");
    try {
      await announceFinishedCall(this.deps, refused);
    } catch (error) {
      // Stored, and on the sweeper's index until it is logged: announced later.
      this.reportFailure(error);
    }
    return { finished: true, call: refused };
  }

  /**
   * A retry with the same call id and input is the call already made (a still-pending one is
   * announced again); the same id with other input is a conflict.
   */
  private async existing(
    stored: CallRecord,
    asked: CallRecord,
    deadline: number,
  ): Promise<CallOutcome> {
    // A call id is its caller's: another key naming it learns nothing of the call.
    if (stored.requestedBy.id !== asked.requestedBy.id) {
      throw new ConflictError(
        `Call ${asked.callId} already exists in run ${asked.parentRunId}, made with another key.`,
      );
    }
    if (stored.inputHash !== asked.inputHash) {
      throw new ConflictError(
        `Call ${asked.callId} already exists in run ${asked.parentRunId} with a different input.`,
      );
    }
    if (stored.status === "pending") await this.announce(stored);
    return this.waitFor(stored, deadline);
  }

  /** A person's decision on a call awaiting approval (final; 409 once decided). */
  decide(
    principal: Principal,
    ids: { runId: string; callId: string },
    decision: { approved: boolean; reason?: string | undefined },
  ): Promise<CallRecord> {
    return decideApproval(this.deps, principal, ids, decision);
  }

  /**
   * Asks a call to stop, for its caller or an administrator: a call not started yet fails
   * `cancelled` now; a running one is asked to stop (`requested`); a finished one is a 409.
   */
  cancel(
    principal: Principal,
    ids: { runId: string; callId: string },
  ): Promise<{ outcome: CancelOutcome; call: CallRecord }> {
    return cancelCall(this.deps, principal, ids);
  }

  /** Calls awaiting approval across runs, the soonest to expire first. */
  awaitingApproval(limit: number): Promise<CallRecord[]> {
    return this.deps.calls.listAwaitingApproval("~", limit);
  }

  /** How many of a run's calls are in each status. */
  countByStatus(parentRunId: string): Promise<Record<string, number>> {
    return this.deps.calls.countByStatus(parentRunId);
  }

  get(parentRunId: string, callId: string): Promise<CallRecord | undefined> {
    return this.deps.calls.get(parentRunId, callId);
  }

  /** The calls made under one trace, whichever runs they belong to, oldest first. */
  byTrace(traceId: string, limit: number): Promise<CallRecord[]> {
    return this.deps.calls.listByTrace(traceId, limit);
  }

  /**
   * Hands the call to its handler and waits for it, within the caller's wait; the call's
   * runner announces it (`runCall`). If the handler cannot start, the call is released to
   * PENDING and announced without `dispatch`, so its bus rule delivers it: nothing is lost,
   * and the event key stays the same. If it failed after it may have started, it is announced
   * here too (the same event key): the stored call says how it ends, and if its handler died
   * the sweeper fails it at its deadline.
   */
  private async dispatchDirectly(
    dispatcher: Dispatcher,
    record: CallRecord,
    deadline: number,
  ): Promise<CallOutcome> {
    const waiting = new AbortController();
    let finished: CallRecord | undefined;
    try {
      finished = await withDeadline(
        dispatcher.dispatch(
          handlerIdFor(record),
          scheduledEnvelope(scheduledDetail(record)),
          waiting.signal,
        ),
        deadline,
      );
    } catch (error) {
      if (!(error instanceof DispatchNotStartedError)) this.reportFailure(error);
      const released =
        error instanceof DispatchNotStartedError &&
        (await this.deps.calls.release(record.parentRunId, record.callId));
      // Released: never announced as direct, so the bus rule takes this announcement.
      await this.announce(released ? releasedCall(record) : record).catch(this.reportFailure);
      return this.waitFor(record, deadline);
    } finally {
      waiting.abort();
    }
    // The wait ran out (undefined), or another runner completed the call: read where it is.
    return finished && isFinished(finished)
      ? { finished: true, call: finished }
      : this.waitFor(record, deadline);
  }

  /**
   * A call's "call accepted" line: for a call the bus runs, which its handler's "call finished"
   * line closes later, elsewhere; for one run directly only where the stage logs inputs (the
   * line that carries it). A direct call is otherwise told whole by its "call finished" line:
   * log bytes are paid for per line.
   */
  private logAccepted(call: CallRecord, dispatch: "direct" | "bus") {
    const { logInputs } = this.deps.config.observability;
    if (dispatch === "direct" && !logInputs) return;
    const input = logInputs ? { input: loggedInput(call.input) } : {};
    this.deps.log?.info("call accepted", {
      ...callFields(call),
      step: "accepted",
      dispatch,
      ...input,
    });
  }

  private announce(call: CallRecord): Promise<void> {
    return announceScheduled(this.deps.bus, call);
  }

  /** Polls the call until it finishes or the deadline passes. */
  private async waitFor(known: CallRecord, deadline: number): Promise<CallOutcome> {
    let call = known;
    // Most calls finish within tens of milliseconds: poll early and often, then settle at a
    // rate that keeps reads cheap for long-running tools.
    let delay = 5;
    // A call awaiting approval waits for a person, not for the caller's `wait`.
    while (!isFinished(call) && call.status !== "awaiting_approval" && Date.now() < deadline) {
      await sleep(Math.min(delay, deadline - Date.now()));
      delay = Math.min(delay * 1.5, 50);
      call =
        (await this.deps.calls.get(call.parentRunId, call.callId)) ??
        notFoundCall(call.parentRunId, call.callId);
    }
    return isFinished(call)
      ? { finished: true, call }
      : { finished: false, call, statusUrl: statusUrl(call) };
  }

  /**
   * Built-in tools check input with their zod schema; registered ones with their JSON Schema
   * (and, for http tools, whether the values can stand in the URL), with the same 400. The
   * JSON Schema checker loads with the first registered tool's call: built-in calls never
   * need it.
   */
  private async inputIssues(spec: ToolSpec, input: unknown): Promise<Issue[]> {
    const implementation = spec.implementation;
    if (implementation.kind === "builtin") {
      const definition = this.deps.definitions.get(spec.id) ?? notFound(spec.id);
      const parsed = definition.input.safeParse(input);
      return parsed.success ? [] : zodIssues(parsed.error.issues);
    }
    const [{ schemaIssues }, { expandUrlTemplate }] = await Promise.all([
      import("../../registered/json-schema"),
      import("../../registered/url-template"),
    ]);
    const issues = schemaIssues(spec.inputSchema, input);
    if (issues.length > 0 || implementation.kind !== "http") return issues;
    try {
      expandUrlTemplate(implementation.url, input as Record<string, unknown>);
      return [];
    } catch (error) {
      return [{ path: "(input)", message: (error as Error).message }];
    }
  }
}

/** The promise's value, or undefined once `deadline` (epoch ms) passes. */
async function withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function notFoundCall(parentRunId: string, callId: string): never {
  throw new NotFoundError(`Call ${callId} does not exist in run ${parentRunId}.`);
}

function notFound(tool: string): never {
  throw new NotFoundError(`Tool ${tool} does not exist.`);
}
