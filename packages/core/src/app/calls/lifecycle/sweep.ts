import type { CallRecord, Failure } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { CallStore, EventSink } from "../../../ports";
import { announceFinished, announceScheduled } from "./announce";
import { expireApprovals } from "./decide";
import { failedResult } from "./records";

export interface SweepDeps {
  calls: CallStore;
  bus: EventSink;
  now?: () => Date;
  /** A call still pending this long after it was recorded is announced again (default 60 s). */
  announceAgainAfterMs?: number;
  /** A call still pending this long is failed: no handler took it (default 15 min). */
  giveUpAfterMs?: number;
  /**
   * A call finished without running this long ago and still not logged is announced now
   * (default 60 s); one that ran is announced once its deadline has passed.
   */
  announceResultAfterMs?: number;
}

const ANNOUNCE_AGAIN_AFTER_MS = 60_000;
const GIVE_UP_AFTER_MS = 15 * 60_000;
const ANNOUNCE_RESULT_AFTER_MS = 60_000;
/** Calls handled per sweep and kind; the next sweep (a minute later) takes the rest. */
const BATCH = 100;

/**
 * Drives on what a crash or a lost event left behind, with the call record as the truth:
 * - RUNNING past its deadline: the handler died after claiming it. It fails as a `timeout`;
 *   one that has its result (the handler died after storing it, before it was logged: a call
 *   stays on the index where it ran until then) is announced again instead, both events.
 * - PENDING for a while: recorded, but its announcement was lost or no handler took it. It is
 *   announced again (the same event key: a handler that already has it finds it claimed);
 *   pending far too long, it fails as `unavailable`.
 * - Finished without running (refused, decided, cancelled while waiting), but its result not
 *   in the run's log 60 s later (the process stopped before announcing it, the bus refused it,
 *   or the recorder never had it): both its events are published again, under the same event
 *   keys; the recorder logs what is missing.
 * - AWAITING APPROVAL past its expiry: nobody decided. It fails as `approval_expired`.
 * Each failure is announced like any result, so no caller waits forever. Every completion is
 * conditional: a handler that finishes late wins.
 */
export async function sweep(deps: SweepDeps): Promise<{ swept: number; announced: number }> {
  const {
    calls,
    bus,
    now = () => new Date(),
    announceAgainAfterMs = ANNOUNCE_AGAIN_AFTER_MS,
    giveUpAfterMs = GIVE_UP_AFTER_MS,
    announceResultAfterMs = ANNOUNCE_RESULT_AFTER_MS,
  } = deps;
  let swept = 0;
  let announced = 0;
  for (const call of await calls.listStuck(now().toISOString(), BATCH)) {
    // Finished where it ran, but its result never reached the log: announced, not failed.
    if (call.result) {
      await announceFinished(bus, call);
      announced++;
      continue;
    }
    const failure = Failures.timeout(
      `${call.toolId} did not finish before its deadline: whatever ran it stopped (it ran past the longest a call may run here, or its process ended). Retry later, or ask for less work in one call.`,
    );
    if (await fail(call, failure)) swept++;
  }

  const waitingSince = new Date(now().getTime() - announceAgainAfterMs).toISOString();
  const giveUpBefore = now().getTime() - giveUpAfterMs;
  for (const call of await calls.listWaiting(waitingSince, BATCH)) {
    // Waiting since it was made, or since a person approved it (which may be hours later).
    const waitingFrom = call.approval?.decision?.at ?? call.scheduledAt;
    if (Date.parse(waitingFrom) < giveUpBefore) {
      // Claimed first, so a handler that takes it meanwhile is not overruled.
      const claimed = await calls.claim(call.parentRunId, call.callId, now().toISOString());
      const failure = Failures.unavailable(
        `${call.toolId} was never run: no handler took the call.`,
      );
      if (claimed && (await fail(claimed, failure))) swept++;
      continue;
    }
    await announceScheduled(bus, call);
    announced++;
  }

  const finishedBefore = new Date(now().getTime() - announceResultAfterMs).toISOString();
  for (const call of await calls.listUnannounced(finishedBefore, BATCH)) {
    if (!call.result) continue;
    // A direct call announces both events together, after its result: both may be missing.
    await announceFinished(bus, call);
    announced++;
  }
  // Approvals nobody decided in time: the call fails as approval_expired, announced.
  swept += await expireApprovals({ calls, bus, now }, BATCH);
  return { swept, announced };

  async function fail(call: CallRecord, failure: Failure): Promise<boolean> {
    const at = now();
    const durationMs = call.startedAt ? at.getTime() - Date.parse(call.startedAt) : 0;
    const result = failedResult(call, failure, at, { durationMs });
    // Only the run it read: a call released and claimed again since has a new deadline.
    const completed = await calls.complete(
      call.parentRunId,
      call.callId,
      result,
      call.deadlineAt ? { deadlineAt: call.deadlineAt } : undefined,
    );
    if (!completed) return false;
    // Its announcement may have died with its handler: the log gets both events either way
    // (the same event key, so a log or subscriber that has it already keeps one).
    await announceFinished(bus, completed);
    return true;
  }
}
