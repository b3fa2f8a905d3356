import type { CallRecord, Principal } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import { ConflictError, ForbiddenError, NotFoundError } from "../../../errors";
import { fallbackLogger, type Logger } from "../../../observability/log";
import type { CallStore, EventSink } from "../../../ports";
import { type AccessRules, mayActFor } from "../../access";
import { announceFinished } from "./announce";
import { failedResult } from "./records";

/**
 * Cancelling a call. Whoever runs a call watches for a cancel two ways: in this process a
 * cancel reaches it at once (RunningCalls); from anywhere else (on AWS the API and the tool
 * are separate functions) it is a mark on the call record, which the handler reads every
 * CANCEL_POLL_MS while the call runs. Either way the tool's abort signal fires and the call
 * ends `cancelled`, unless it finished first: a finished call stays as it finished.
 */

/** How often a running call's handler reads whether it was cancelled, after the first wait. */
export const CANCEL_POLL_MS = 1_000;

const keyOf = (parentRunId: string, callId: string) => `${parentRunId}\n${callId}`;

/** The calls running in this process, so that a cancel made here stops them without a poll. */
export class RunningCalls {
  readonly #calls = new Map<string, AbortController>();

  /** Holds a running call's controller until the returned release is called. */
  hold(parentRunId: string, callId: string, controller: AbortController): () => void {
    const key = keyOf(parentRunId, callId);
    this.#calls.set(key, controller);
    return () => {
      if (this.#calls.get(key) === controller) this.#calls.delete(key);
    };
  }

  /** Aborts the call if it runs in this process; whether it did. */
  abort(parentRunId: string, callId: string): boolean {
    const controller = this.#calls.get(keyOf(parentRunId, callId));
    controller?.abort(new Error("cancelled"));
    return controller !== undefined;
  }
}

export interface CancelWatchDeps {
  calls: Pick<CallStore, "cancelRequested">;
  running?: RunningCalls;
  log?: Logger;
}

/**
 * Watches one running call for a cancel until `stop`: `signal` aborts when one is made in this
 * process or found on the call record. A failed read is reported and read again next time.
 */
export function watchCancel(
  call: Pick<CallRecord, "parentRunId" | "callId">,
  deps: CancelWatchDeps,
): { signal: AbortSignal; stop(): void } {
  const controller = new AbortController();
  const release = deps.running?.hold(call.parentRunId, call.callId, controller);
  let timer: NodeJS.Timeout | undefined;
  const poll = () => {
    timer = setTimeout(async () => {
      try {
        if (await deps.calls.cancelRequested(call.parentRunId, call.callId)) {
          controller.abort(new Error("cancelled"));
          return;
        }
      } catch (error) {
        (deps.log ?? fallbackLogger()).warn("Could not read whether a call was cancelled", {
          callId: call.callId,
          error,
        });
      }
      if (!controller.signal.aborted && timer !== undefined) poll();
    }, CANCEL_POLL_MS);
  };
  poll();
  return {
    signal: controller.signal,
    stop() {
      clearTimeout(timer);
      timer = undefined;
      release?.();
    },
  };
}

export interface CancelDeps {
  calls: CallStore;
  bus: EventSink;
  config: AccessRules;
  running?: RunningCalls;
  now?: () => Date;
}

/** What a cancel came to: stopped before it started, asked of its handler, or already over. */
export type CancelOutcome = "cancelled" | "requested";

/**
 * Asks a call to stop, for its requester or someone who may act for others. Not started yet
 * (waiting, or waiting for approval): it fails `cancelled` now and both its events go out.
 * Running: its handler is asked, here at once and elsewhere through the record; asking again
 * is harmless. Finished: a ConflictError with its status, for the caller to read its result.
 */
export async function cancelCall(
  deps: CancelDeps,
  principal: Principal,
  ids: { runId: string; callId: string },
): Promise<{ outcome: CancelOutcome; call: CallRecord }> {
  const now = (deps.now ?? (() => new Date()))();
  const stored = await deps.calls.get(ids.runId, ids.callId);
  if (!stored) throw new NotFoundError(`Call ${ids.callId} does not exist in run ${ids.runId}.`);
  if (!mayActFor(deps.config, principal, stored.requestedBy)) {
    throw new ForbiddenError(
      `Call ${ids.callId} was made by another key; only its caller or an administrator may cancel it.`,
    );
  }
  const failure = Failures.cancelled(
    `${stored.toolId} was cancelled at ${principal.id === stored.requestedBy.id ? "its caller's" : "an administrator's"} request before it finished.`,
  );
  const done = await deps.calls.cancel(ids.runId, ids.callId, failedResult(stored, failure, now));
  if (!done) throw new NotFoundError(`Call ${ids.callId} does not exist in run ${ids.runId}.`);
  if (done.outcome === "finished") {
    throw new ConflictError(
      `Call ${ids.callId} already finished (${done.call.status}); a finished call stays as it finished.`,
      { details: { status: done.call.status } },
    );
  }
  if (done.outcome === "cancelled") await announceFinished(deps.bus, done.call);
  else deps.running?.abort(ids.runId, ids.callId);
  return { outcome: done.outcome, call: done.call };
}
