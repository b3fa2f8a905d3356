/** Grace past the tool's own timeout before a RUNNING call counts as stuck. */
const DEADLINE_GRACE_MS = 30_000;

/** When a call claimed now counts as stuck (its handler died): whoever claims uses this. */
export function claimDeadline(now: Date, timeoutMs: number): string {
  return new Date(now.getTime() + timeoutMs + DEADLINE_GRACE_MS).toISOString();
}

/** Strictly after scheduledAt, so a run's log (ordered by time) never shows a result first. */
export function completionTime(scheduledAt: string, now: Date): string {
  const floor = Date.parse(scheduledAt) + 1;
  return new Date(Math.max(now.getTime(), floor)).toISOString();
}
