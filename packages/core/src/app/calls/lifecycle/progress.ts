/*
 * A running call's progress, throttled before it reaches the bus: a tool may report as often
 * as it likes, the bus carries at most one step per window per call.
 */

/** How a tool reports progress: how far it is, out of how much (if it knows), and a note. */
export type ReportProgress = (progress: number, total?: number, message?: string) => void;

/** One step as reported, with when. */
export interface ProgressReport {
  progress: number;
  total?: number | undefined;
  message?: string | undefined;
  reportedAt: string;
}

/** At most one progress step per call goes on the bus in this long. */
export const PROGRESS_WINDOW_MS = 500;

/** The clock and timer the throttle runs on: injectable for tests. */
export interface ThrottleClock {
  now(): number;
  /** Runs `run` after `ms`; the function returned cancels it. */
  after(ms: number, run: () => void): () => void;
}

export interface ProgressThrottle<T> {
  /** Takes a step: sent now if the window allows, else kept (the latest wins) until it ends. */
  report(step: T): void;
  /**
   * Sends the step still kept, if any, and takes no more; resolves once every send has
   * settled. The call's result is announced after this, so no step follows it.
   */
  close(): Promise<void>;
}

/**
 * Per-call throttle: the first step goes at once; a step within `windowMs` of the last one
 * sent is kept, replacing any kept before it, and sent when the window ends. Sends run one
 * after another, in order. A failed send is the sender's to report: it never stops the call.
 */
export function throttleProgress<T>(
  send: (step: T) => Promise<void>,
  options: { windowMs?: number; clock?: ThrottleClock } = {},
): ProgressThrottle<T> {
  const windowMs = options.windowMs ?? PROGRESS_WINDOW_MS;
  const clock = options.clock ?? {
    now: Date.now,
    after: (ms: number, run: () => void) => {
      const timer = setTimeout(run, ms);
      return () => clearTimeout(timer);
    },
  };
  let lastSentAt: number | undefined;
  let kept: { step: T } | undefined;
  let cancelTimer: (() => void) | undefined;
  let closed = false;
  let sending: Promise<void> = Promise.resolve();

  const flush = () => {
    cancelTimer?.();
    cancelTimer = undefined;
    if (!kept) return;
    const { step } = kept;
    kept = undefined;
    lastSentAt = clock.now();
    sending = sending.then(() => send(step)).catch(() => undefined);
  };

  return {
    report(step) {
      if (closed) return;
      kept = { step };
      const wait = lastSentAt === undefined ? 0 : lastSentAt + windowMs - clock.now();
      if (wait <= 0) flush();
      else cancelTimer ??= clock.after(wait, flush);
    },
    async close() {
      if (!closed) {
        closed = true;
        flush();
      }
      await sending;
    },
  };
}
