import { constants } from "node:os";

type Stopper = () => Promise<void>;

const HANDLED_SIGNALS = ["SIGINT", "SIGTERM"] as const;
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
