import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY,
  giveUpAt,
  nextAttemptAt,
  nextAttemptDelayMs,
  retryDelayMs,
} from "./backoff";

const lowest = () => 0;
const highest = () => 1 - Number.EPSILON;
const options = { baseMs: 1_000, maxMs: 60_000 };

describe("nextAttemptDelayMs", () => {
  it("doubles the ceiling with each failed attempt", () => {
    const ceilings = [1, 2, 3, 4, 5].map((attempt) =>
      nextAttemptDelayMs(attempt, { ...options, random: highest }),
    );
    expect(ceilings).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it("keeps at least half of the ceiling, so retries spread out whatever the draw", () => {
    const floors = [1, 2, 3, 4, 5].map((attempt) =>
      nextAttemptDelayMs(attempt, { ...options, random: lowest }),
    );
    expect(floors).toEqual([500, 1_000, 2_000, 4_000, 8_000]);
  });

  it("draws between half the ceiling and the ceiling", () => {
    expect(nextAttemptDelayMs(3, { ...options, random: () => 0.5 })).toBe(3_000);
  });

  it("never waits longer than maxMs, even after very many attempts", () => {
    expect(nextAttemptDelayMs(7, { ...options, random: highest })).toBe(60_000);
    expect(nextAttemptDelayMs(5_000, { ...options, random: highest })).toBe(60_000);
    expect(nextAttemptDelayMs(5_000, { ...options, random: lowest })).toBe(30_000);
  });

  it("stays within [ceiling / 2, min(ceiling, maxMs)] for any attempt and draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, draw) => {
          const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** (attempt - 1));
          const delay = nextAttemptDelayMs(attempt, { ...options, random: () => draw });
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
          expect(delay).toBeLessThanOrEqual(ceiling);
          expect(Number.isInteger(delay)).toBe(true);
        },
      ),
    );
  });

  it("uses the defaults when given no options", () => {
    const delay = nextAttemptDelayMs(1);
    expect(delay).toBeGreaterThanOrEqual(DEFAULT_RETRY.baseMs / 2);
    expect(delay).toBeLessThanOrEqual(DEFAULT_RETRY.baseMs);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses attempt %s", (attempt) => {
    expect(() => nextAttemptDelayMs(attempt, options)).toThrow(RangeError);
  });

  it("refuses options that would make the cap meaningless", () => {
    expect(() => nextAttemptDelayMs(1, { baseMs: 0 })).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1, { baseMs: 10, maxMs: 5 })).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1, { ...options, random: () => 1 })).toThrow(RangeError);
    expect(() => nextAttemptDelayMs(1, { ...options, random: () => -0.1 })).toThrow(RangeError);
  });
});

describe("retryDelayMs", () => {
  const retry = { ...options, maxRetryAfterMs: 3_600_000, random: lowest };

  it("is the backoff when the receiver asked for nothing", () => {
    expect(retryDelayMs(3, undefined, retry)).toBe(2_000);
  });

  it("waits as long as the receiver asked when that is longer than the backoff", () => {
    expect(retryDelayMs(3, 120_000, retry)).toBe(120_000);
  });

  it("keeps the backoff when the receiver asked for less, so Retry-After: 0 cannot loop", () => {
    expect(retryDelayMs(3, 0, retry)).toBe(2_000);
    expect(retryDelayMs(3, 500, retry)).toBe(2_000);
  });

  it("caps what the receiver can ask for", () => {
    expect(retryDelayMs(1, 10 * 3_600_000, retry)).toBe(3_600_000);
    expect(retryDelayMs(1, 10 * 3_600_000, { ...options, random: lowest })).toBe(
      DEFAULT_RETRY.maxRetryAfterMs,
    );
  });

  it("rounds a fractional Retry-After up, never waiting less than asked", () => {
    expect(retryDelayMs(1, 1_500.2, retry)).toBe(1_501);
  });

  it.each([Number.NaN, -5_000, Number.POSITIVE_INFINITY])(
    "ignores the unusable Retry-After %s",
    (retryAfterMs) => {
      expect(retryDelayMs(3, retryAfterMs, retry)).toBe(2_000);
    },
  );
});

describe("giveUpAt", () => {
  it("is the first attempt plus the window, three days by default", () => {
    expect(giveUpAt(1_000, 5_000)).toBe(6_000);
    expect(giveUpAt(0)).toBe(72 * 3_600_000);
  });

  it("refuses a window that is not a duration", () => {
    expect(() => giveUpAt(0, -1)).toThrow(RangeError);
    expect(() => giveUpAt(Number.NaN, 1)).toThrow(RangeError);
  });
});

describe("nextAttemptAt", () => {
  const start = 1_700_000_000_000;

  it("schedules the retry after the backoff from now", () => {
    expect(
      nextAttemptAt({ attempt: 2, firstAttemptAt: start, now: start + 10_000, random: lowest }),
    ).toBe(start + 10_000 + 5_000);
  });

  it("gives up instead of retrying after the window", () => {
    const late = { attempt: 30, firstAttemptAt: start, random: lowest, windowMs: 86_400_000 };
    expect(nextAttemptAt({ ...late, now: start + 86_400_000 - 3 * 3_600_000 })).toBe(
      start + 86_400_000,
    );
    expect(nextAttemptAt({ ...late, now: start + 86_400_000 - 3 * 3_600_000 + 1 })).toBe(undefined);
  });

  it("gives up rather than retry earlier than the receiver asked", () => {
    expect(
      nextAttemptAt({
        attempt: 1,
        firstAttemptAt: start,
        now: start,
        retryAfterMs: 3_600_000,
        windowMs: 1_800_000,
        random: lowest,
      }),
    ).toBe(undefined);
  });

  it("spans the default window with a bounded number of attempts", () => {
    let now = start;
    let attempts = 1;
    for (;;) {
      const next = nextAttemptAt({ attempt: attempts, firstAttemptAt: start, now, random: lowest });
      if (next === undefined) break;
      now = next;
      attempts += 1;
    }
    // Every attempt's backoff is at its floor here, so this is the most attempts there can be.
    expect(attempts).toBeGreaterThan(10);
    expect(attempts).toBeLessThanOrEqual(40);
    expect(now - start).toBeGreaterThan(DEFAULT_RETRY.windowMs - DEFAULT_RETRY.maxMs);
  });
});
