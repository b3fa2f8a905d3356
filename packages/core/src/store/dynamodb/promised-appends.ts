import type { EventLogPage } from "../../ports";
import type { DynamoStoreOptions } from "./client";
import { DynamoEventLog } from "./event-log";
import { runTopic } from "./followers";

/*
 * Run-log appends this process has promised to make, by table and run: where a call is answered
 * before its events are logged (compose/late-announcements.ts), the process's readers of the
 * run wait for them, so whoever got the answer reads the events as if they had been logged
 * before it. A module of its own: a function that neither answers early nor reads run logs
 * carries none of it.
 */

const promised = new Map<string, Set<Promise<unknown>>>();

/**
 * Longest a read waits for them. An announcement takes milliseconds; one held up (a bus or a
 * table not answering) must not hold up every reader of the run: past this, the read goes on
 * without it, and the events come when they are logged (by the sweeper, if it comes to that).
 */
const MAX_WAIT_MS = 2_000;

/** Registers an append to the run that this process makes once `until` settles. */
export function promiseAppend(tableName: string, parentRunId: string, until: Promise<unknown>) {
  const key = runTopic(tableName, parentRunId);
  let pending = promised.get(key);
  if (!pending) {
    pending = new Set();
    promised.set(key, pending);
  }
  const waiting = pending;
  waiting.add(until);
  const done = () => {
    waiting.delete(until);
    if (waiting.size === 0 && promised.get(key) === waiting) promised.delete(key);
  };
  until.then(done, done);
}

/** Settles once the appends promised to the run so far have; undefined when there are none. */
export function promisedAppends(tableName: string, parentRunId: string) {
  const pending = promised.get(runTopic(tableName, parentRunId));
  return pending ? Promise.allSettled([...pending]) : undefined;
}

/** The run logs as the API reads them: a read first waits for the appends promised to its run. */
export class PromiseKeepingEventLog extends DynamoEventLog {
  readonly #tableName: string;

  constructor(options: DynamoStoreOptions) {
    super(options);
    this.#tableName = options.tableName;
  }

  override async read(
    parentRunId: string,
    options?: { cursor?: string; limit?: number },
  ): Promise<EventLogPage> {
    const promised = promisedAppends(this.#tableName, parentRunId);
    if (promised) await withinWait(promised);
    return super.read(parentRunId, options);
  }
}

async function withinWait(promise: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise((resolve) => {
      timer = setTimeout(resolve, MAX_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
}
