import { constants } from "node:os";

type Stopper = () => Promise<void>;

const HANDLED_SIGNALS = ["SIGINT", "SIGTERM"] as const;
/** The longest a stop may take before the process exits anyway (the JVM's watchdog follows). */
const STOP_WITHIN_MS = 15_000;
const stoppers = new Set<Stopper>();
let shuttingDown = false;

function onSignal(signal: NodeJS.Signals): void {
  // 130 for SIGINT, 143 for SIGTERM, as a shell reports a process killed by the signal.
  const exitCode = 128 + (constants.signals[signal] ?? 0);
  if (shuttingDown) {
    // A second Ctrl-C means "now": the watchdog still ends whatever is left.
    process.exit(exitCode);
  }
  shuttingDown = true;
  // Bounded: a stop that hangs (a call that never settles) must not keep the process up.
  setTimeout(() => process.exit(exitCode), STOP_WITHIN_MS).unref();
  void Promise.allSettled([...stoppers].map((stop) => stop())).then(() => process.exit(exitCode));
}

/**
 * Opt-in: on SIGINT or SIGTERM, run `stop` (with every other registered stopper), then exit
 * with the conventional code. One listener pair serves all registrations so that several
 * launchers shut down together instead of racing to call process.exit. Returns the
 * unregister function; the listeners go away with the last registration, giving the
 * signals back their default behaviour.
 */
export function stopOnSignals(stop: Stopper): () => void {
  if (stoppers.size === 0) {
    for (const signal of HANDLED_SIGNALS) process.on(signal, onSignal);
  }
  stoppers.add(stop);
  return () => {
    stoppers.delete(stop);
    if (stoppers.size === 0 && !shuttingDown) {
      for (const signal of HANDLED_SIGNALS) process.off(signal, onSignal);
    }
  };
}
