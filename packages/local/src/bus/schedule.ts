import { validation } from "./errors";

const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON = /^cron\((\S+ ){5}\S+\)$/;
const UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

/**
 * Validates a ScheduleExpression and returns its period for `rate(...)` rules. `cron(...)`
 * rules are accepted and stored but not fired locally: the local bus runs on a laptop that
 * sleeps, so wall-clock schedules would mislead more than help.
 */
export function schedulePeriodMs(expression: string): number | undefined {
  const rate = RATE.exec(expression);
  if (rate) {
    const value = Number(rate[1]);
    const unit = rate[2]?.replace(/s$/, "") as keyof typeof UNIT_MS;
    const singular = value === 1;
    if (value < 1 || singular !== !rate[2]?.endsWith("s")) {
      throw validation("Parameter ScheduleExpression is not valid.");
    }
    return value * UNIT_MS[unit];
  }
  if (CRON.test(expression)) return undefined;
  throw validation("Parameter ScheduleExpression is not valid.");
}
