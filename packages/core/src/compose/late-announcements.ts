import type { CallRecord } from "@toolbus/wire/model/call";
import type { Deployment } from "../deployment";
import { fallbackLogger } from "../observability/log";
import { promiseAppend } from "../store/dynamodb/promised-appends";
import { shared, storeOf } from "./pieces";

/**
 * Calls stored and answered, still being announced and logged: where one process outlives
 * its answers (`npm start`, tests), a caller need not wait for the bus and the run's log,
 * which took as long as the call's own two writes. Nothing is lost by it: a call not logged
 * stays on the sweeper's index and is announced again; and nobody reads the log too early
 * here, since this process's readers of the run wait for its announcing
 * (store/dynamodb/promised-appends.ts). A run's calls are announced in the order they were
 * answered: a call made after another's answer is not logged before it.
 */
export class LateAnnouncements {
  /**
   * Each run's last announcement taken over: the next one of the run waits for it, so it
   * settles only once every earlier one of its run has.
   */
  readonly #lastOfRun = new Map<string, Promise<void>>();

  constructor(private readonly deployment: Deployment) {}

  /** Takes over announcing `call` (RunDeps.announceLater). */
  readonly take = (call: CallRecord, announce: () => Promise<void>): void => {
    const run = call.parentRunId;
    // Started once this turn is over (the answer goes out first) and the run's announcement
    // before it is done.
    const announcing = Promise.all([
      this.#lastOfRun.get(run),
      new Promise((resolve) => setImmediate(resolve)),
    ]).then(announce);
    const settled = announcing.catch((error: unknown) => {
      (this.deployment.log ?? fallbackLogger()).error(
        "A finished call could not be announced: the sweeper announces it again",
        { callId: call.callId, error },
      );
    });
    promiseAppend(storeOf(this.deployment).tableName, run, settled);
    this.#lastOfRun.set(run, settled);
    settled.finally(() => {
      if (this.#lastOfRun.get(run) === settled) this.#lastOfRun.delete(run);
    });
  };

  /** Resolves once every call taken over so far is announced (or given up on). */
  async idle(): Promise<void> {
    while (this.#lastOfRun.size > 0) await Promise.all([...this.#lastOfRun.values()]);
  }
}

/** The deployment's late announcements: one per deployment and process. */
export const lateAnnouncementsOf = (deployment: Deployment): LateAnnouncements =>
  shared(deployment, "late-announcements", () => new LateAnnouncements(deployment));
