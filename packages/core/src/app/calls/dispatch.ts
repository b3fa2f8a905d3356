import { ToolbusError } from "../../errors";
import type { EventPublisher } from "../../events/publisher";
import type { CallRecord } from "../../model/call";
import { scheduledEventKey, type ToolCallScheduled } from "../../model/events";
import { fallbackLogger, type Logger } from "../../observability/log";
import { EVENT_SOURCE } from "../../wiring";

/** ToolCallScheduled as a handler receives it, from the bus or from a direct dispatch. */
export interface ScheduledEnvelope {
  source: typeof EVENT_SOURCE;
  "detail-type": "ToolCallScheduled";
  time: string;
  detail: ToolCallScheduled;
}

export function scheduledEnvelope(detail: ToolCallScheduled): ScheduledEnvelope {
  return {
    source: EVENT_SOURCE,
    "detail-type": "ToolCallScheduled",
    time: detail.scheduledAt,
    detail,
  };
}

/**
 * What a tool handler may be given beside its event when it runs in this process. On Lambda
 * the second argument is Lambda's own context, which has no such hook.
 */
export interface InProcessContext {
  /** Called once the result is stored, before it is announced, so a waiting caller answers at once. */
  onCompleted?(call: CallRecord): void;
}

/** A handler of the wiring table: resolves with the finished call when it ran one. */
export type CallHandler = (event: unknown, context?: unknown) => Promise<CallRecord | undefined>;

/**
 * The dispatch could not start: the handler is certainly not running the call (throttled,
 * missing, not ready). The call stays claimable and goes to the bus instead.
 */
export class DispatchNotStartedError extends ToolbusError {
  override name = "DispatchNotStartedError";
}

/**
 * Hands a scheduled call straight to its handler while a caller waits, instead of letting the
 * bus deliver it. Resolves with the finished call once it is stored (undefined when the
 * handler finished nothing: someone else had completed the call). Rejects with
 * DispatchNotStartedError only when the handler surely did not start; any other rejection
 * means it may have. `signal` gives up waiting; it never stops a call that started.
 */
export interface Dispatcher {
  /** The handlers run in this process: `onCompleted` is called before the result is announced. */
  readonly inProcess?: boolean;
  /**
   * `onCompleted`, where the dispatcher can, runs synchronously once the result is stored and
   * just before the handler announces it, so announcements made from it leave together.
   */
  dispatch(
    handler: string,
    event: ScheduledEnvelope,
    signal: AbortSignal,
    onCompleted?: () => void,
  ): Promise<CallRecord | undefined>;
  /** Resolves once every handler started here has finished, announcing included. */
  idle?(): Promise<void>;
}

/**
 * `npm start` and tests: the handlers run in this process, and the caller is answered as soon
 * as the result is stored while the handler goes on to announce it.
 */
export function inProcessDispatcher(
  handlers: Readonly<Record<string, CallHandler>>,
  reportLateFailure: (error: unknown) => void = dispatchFailureReporter(),
): Dispatcher {
  const running = new Set<Promise<unknown>>();
  return {
    inProcess: true,
    dispatch(handlerId, event, _signal, onCompleted) {
      const handler = handlers[handlerId];
      if (!handler) {
        return Promise.reject(new DispatchNotStartedError(`No handler ${handlerId} here.`));
      }
      return new Promise((resolve, reject) => {
        let settled = false;
        const settle = (call: CallRecord | undefined) => {
          settled = true;
          resolve(call);
        };
        const context: InProcessContext = {
          onCompleted: (call) => {
            onCompleted?.();
            settle(call);
          },
        };
        const run = handler(event, context).then(settle, (error: unknown) => {
          // After the result was stored, a failure to announce it is the outbox's to repair;
          // the caller already has its answer.
          if (settled) reportLateFailure(error);
          else reject(error);
        });
        running.add(run);
        void run.finally(() => running.delete(run));
      });
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/**
 * Handlers under these ids whose code is loaded, all at once, when one is first called. The
 * ids are known up front, so a dispatcher and the bus wiring see every handler without
 * loading any; a process whose calls run elsewhere never loads them.
 */
export function handlersLoadedOnUse(
  ids: readonly string[],
  load: () => Promise<Readonly<Record<string, CallHandler>>>,
): Record<string, CallHandler> {
  let loaded: Promise<Readonly<Record<string, CallHandler>>> | undefined;
  const handlers: Record<string, CallHandler> = {};
  for (const id of ids) {
    handlers[id] = async (event, context) => {
      loaded ??= load();
      const handler = (await loaded)[id];
      if (!handler) throw new Error(`The loaded handlers have no ${id}.`);
      return handler(event, context);
    };
  }
  return handlers;
}

/** A direct dispatch that failed after it may have started: worth a line, not the caller's 500. */
export function dispatchFailureReporter(log: Logger = fallbackLogger()): (error: unknown) => void {
  return (error) => log.error("A directly dispatched call failed in its handler", { error });
}

/** The ToolCallScheduled detail of a recorded call: the same fields whoever announces it. */
export function scheduledDetail(call: CallRecord): ToolCallScheduled & { [key: string]: unknown } {
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
    ...(call.dispatch ? { dispatch: call.dispatch } : {}),
    ...(call.trace ? { trace: call.trace } : {}),
    ...(call.fallbackAccess ? { fallbackAccess: call.fallbackAccess } : {}),
  };
}

/**
 * Announces a recorded call (ToolCallScheduled under its event key): first by the API, again
 * by a retry or the sweeper. Consumers dedupe by the key, so announcing again is safe.
 */
export async function announceScheduled(
  publisher: Pick<EventPublisher, "publish">,
  call: CallRecord,
): Promise<void> {
  await publisher.publish([{ detailType: "ToolCallScheduled", detail: scheduledDetail(call) }]);
}
