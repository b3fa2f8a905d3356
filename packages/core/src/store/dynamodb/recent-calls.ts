import type { CallRecord } from "@toolbus/wire/model/call";
import { perTable } from "./per-table";

/** Calls a process keeps in mind; far more than finish within an event's way to the recorder. */
const REMEMBERED = 10_000;

/**
 * The calls this process wrote last, as its conditional writes left them, shared by every call
 * store on one client and table. What a write that succeeded stored is what the table holds:
 * a call's tool and time never change, and a finished call never changes again. So where the
 * recorder runs in the process that ran the call (`npm start`), it checks an event against
 * this instead of reading the call back; a Lambda recorder remembers nothing and reads.
 */
export class RecentCalls {
  readonly #calls = new Map<string, CallRecord>();

  remember(call: CallRecord): void {
    const key = `${call.parentRunId}\n${call.callId}`;
    this.#calls.delete(key);
    this.#calls.set(key, call);
    if (this.#calls.size > REMEMBERED) {
      const oldest = this.#calls.keys().next();
      if (!oldest.done) this.#calls.delete(oldest.value);
    }
  }

  get(parentRunId: string, callId: string): CallRecord | undefined {
    return this.#calls.get(`${parentRunId}\n${callId}`);
  }
}

/** The memory every call store of this process on one client and table shares. */
export const recentCalls = perTable(() => new RecentCalls());
