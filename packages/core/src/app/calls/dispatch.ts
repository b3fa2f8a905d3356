import type { CallRecord } from "@toolbus/wire/model/call";
import { ToolbusError } from "../../errors";
import { fallbackLogger, type Logger } from "../../observability/log";
import type { ScheduledEnvelope } from "./lifecycle";

/**
 * The dispatch could not start: the handler is certainly not running the call (throttled,
 * missing, not ready). The call stays claimable and goes to the bus instead.
 */
export class DispatchNotStartedError extends ToolbusError {
  override name = "DispatchNotStartedError";
}

/**
 * Hands a scheduled call straight to its handler while a caller waits, instead of letting the
 * bus deliver it: the handlers in this process (`npm start`, tests) or each tool's function
 * (AWS). Resolves with the finished call once its handler is done (undefined when the handler
 * finished nothing: someone else had completed the call). Rejects with DispatchNotStartedError
 * only when the handler surely did not start; any other rejection means it may have.
 * `signal` gives up waiting; it never stops a call that started.
 */
export interface Dispatcher {
  dispatch(
    handler: string,
    event: ScheduledEnvelope,
    signal: AbortSignal,
  ): Promise<CallRecord | undefined>;
  /** Resolves once every handler started here has finished, announcing included. */
  idle?(): Promise<void>;
}

/** A direct dispatch that failed after it may have started: worth a line, not the caller's 500. */
export function dispatchFailureReporter(log: Logger = fallbackLogger()): (error: unknown) => void {
  return (error) => log.error("A directly dispatched call failed in its handler", { error });
}
