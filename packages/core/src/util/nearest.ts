/** Longest word compared: past it a suggestion is noise, and the work stays bounded. */
const MAX_LENGTH = 64;

/**
 * The candidate closest to `word` by edit distance, if one is close enough to be the word
 * meant (at most a third of its length, and at least 1 edit allowed): `outbond` → `outbound`.
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > MAX_LENGTH) return undefined;
  const allowed = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = allowed + 1;
  for (const candidate of candidates) {
    if (candidate.length > MAX_LENGTH || Math.abs(candidate.length - word.length) > allowed) {
      continue;
    }
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** Levenshtein distance, one row at a time. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
