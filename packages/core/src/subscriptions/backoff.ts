/**
 * When a failed webhook delivery is tried again. Pure functions of their inputs (the clock and
 * the random source are parameters) so a schedule can be computed, stored and tested exactly.
 */

export interface BackoffOptions {
  /** The ceiling of the first retry's delay; each later retry doubles it. */
  baseMs: number;
  /** No retry waits longer than this, however many attempts failed. */
  maxMs: number;
  /** A number in [0, 1); Math.random unless a test fixes it. */
  random: () => number;
}

export interface RetryOptions extends BackoffOptions {
  /** The longest wait a receiver's Retry-After can impose. */
  maxRetryAfterMs: number;
}

const HOUR_MS = 60 * 60 * 1000;

/**
 * Defaults shaped like the Standard Webhooks example schedule: a first retry within seconds
 * (most failures are blips), then doubling to three to six hours apart, for three days. A
 * receiver that stays down gets 24 to 36 attempts (about 28) before it is given up on.
 */
export const DEFAULT_RETRY: Readonly<Omit<RetryOptions, "random"> & { windowMs: number }> = {
  baseMs: 5_000,
  maxMs: 6 * HOUR_MS,
  maxRetryAfterMs: HOUR_MS,
  windowMs: 72 * HOUR_MS,
};

/**
 * The wait after the `attempt`-th attempt failed (1 after the first): exponential, capped, with
 * "equal jitter", i.e. uniformly between half the ceiling and the ceiling.
 *
 * Equal rather than full jitter (0 to the ceiling): full jitter does the least total work when
 * many clients contend for one server, but it can draw a wait near zero at any attempt, so a
 * receiver that is down gets retries in quick succession that spend the attempts meant to span
 * its outage. Keeping half of the exponential wait guarantees the schedule keeps spreading out;
 * the other half still decorrelates the burst of deliveries that fail together when a receiver
 * goes down, so they do not all come back at the same moment.
 */
export function nextAttemptDelayMs(attempt: number, options: Partial<BackoffOptions> = {}): number {
  const { baseMs, maxMs, random } = backoffOptions(options);
  if (!Number.isSafeInteger(attempt) || attempt < 1) {
    throw new RangeError("attempt counts from 1 (the first attempt)");
  }
  // 2 ** attempt overflows to Infinity for large attempts, which the cap absorbs.
  const ceiling = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  const half = ceiling / 2;
  return Math.min(maxMs, Math.round(half + unit(random) * half));
}

/**
 * The wait after a failed attempt when the receiver may have sent Retry-After: never earlier
 * than it asked (it knows its own rate limit or maintenance window), never earlier than the
 * backoff (a Retry-After of 0 must not turn into a tight loop), and never longer than
 * `maxRetryAfterMs`, so a receiver cannot park its deliveries past the give-up window with one
 * header; if it still is not ready then, it can say so again.
 */
export function retryDelayMs(
  attempt: number,
  retryAfterMs?: number,
  options: Partial<RetryOptions> = {},
): number {
  const backoff = nextAttemptDelayMs(attempt, options);
  const cap = options.maxRetryAfterMs ?? DEFAULT_RETRY.maxRetryAfterMs;
  if (!(cap >= 0)) throw new RangeError("maxRetryAfterMs must be 0 or more");
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= 0) {
    return backoff;
  }
  return Math.max(backoff, Math.min(Math.ceil(retryAfterMs), cap));
}

/** When a delivery first tried at `firstAttemptAt` (epoch ms) stops being retried. */
export function giveUpAt(
  firstAttemptAt: number,
  windowMs: number = DEFAULT_RETRY.windowMs,
): number {
  if (!Number.isFinite(firstAttemptAt) || !(windowMs >= 0)) {
    throw new RangeError("giveUpAt needs a finite start and a window of 0 or more");
  }
  return firstAttemptAt + windowMs;
}

export interface NextAttemptInput extends Partial<RetryOptions> {
  /** How many attempts have failed so far, this one included. */
  attempt: number;
  /** Epoch ms of the first attempt: the give-up window counts from it. */
  firstAttemptAt: number;
  /** Epoch ms now (when the attempt failed). */
  now: number;
  retryAfterMs?: number;
  windowMs?: number;
}

/**
 * When to try again (epoch ms), or undefined to give up: a retry that would fall after the
 * window is not made, rather than squeezed in early, so "never earlier than asked" holds.
 */
export function nextAttemptAt(input: NextAttemptInput): number | undefined {
  const at = input.now + retryDelayMs(input.attempt, input.retryAfterMs, input);
  return at > giveUpAt(input.firstAttemptAt, input.windowMs) ? undefined : at;
}

function backoffOptions(options: Partial<BackoffOptions>): BackoffOptions {
  const baseMs = options.baseMs ?? DEFAULT_RETRY.baseMs;
  const maxMs = options.maxMs ?? DEFAULT_RETRY.maxMs;
  if (!(baseMs > 0) || !Number.isFinite(baseMs)) throw new RangeError("baseMs must be positive");
  if (!(maxMs >= baseMs) || !Number.isFinite(maxMs)) {
    throw new RangeError("maxMs must be finite and at least baseMs");
  }
  return { baseMs, maxMs, random: options.random ?? Math.random };
}

/** A random source outside [0, 1) is a bug in the caller, refused so the cap stays a cap. */
function unit(random: () => number): number {
  const value = random();
  if (!(value >= 0 && value < 1)) throw new RangeError("random() must return a number in [0, 1)");
  return value;
}
