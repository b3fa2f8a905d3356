import type { EventEmitter } from "node:events";

/**
 * Resolves on the emitter's next `topic`, or when `signal` aborts, and leaves no listener
 * behind either way: what in-process followers wait on instead of polling.
 */
export function settleOn(emitter: EventEmitter, topic: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      emitter.off(topic, done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    emitter.on(topic, done);
    signal.addEventListener("abort", done, { once: true });
  });
}
