import type { CallRecord } from "@toolbus/wire/model/call";
import { type Dispatcher, DispatchNotStartedError } from "../app/calls/dispatch";

/** A handler of the wiring table: resolves with the finished call when it ran one. */
export type CallHandler = (event: unknown) => Promise<CallRecord | undefined>;

/** `npm start` and tests: a direct call runs in this process's handler for it. */
export function inProcessDispatcher(handlers: Readonly<Record<string, CallHandler>>): Dispatcher {
  const running = new Set<Promise<unknown>>();
  return {
    dispatch(handlerId, event) {
      const handler = handlers[handlerId];
      if (!handler) {
        return Promise.reject(new DispatchNotStartedError(`No handler ${handlerId} here.`));
      }
      const run = handler(event);
      running.add(run);
      const forget = () => running.delete(run);
      run.then(forget, forget);
      return run;
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
    handlers[id] = async (event) => {
      loaded ??= load();
      const handler = (await loaded)[id];
      if (!handler) throw new Error(`The loaded handlers have no ${id}.`);
      return handler(event);
    };
  }
  return handlers;
}
