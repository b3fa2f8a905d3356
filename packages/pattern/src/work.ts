/**
 * What one `match` of the pattern index did, counted as it goes. Its cost is meant to follow
 * the event and what it matches, never the number of patterns: these counts let a test check
 * exactly that, where a clock would mostly measure how busy the machine was. The bench times
 * the same shapes.
 */
export interface MatchWork {
  /** Event values taken off the walk: values at fields some pattern names, array elements. */
  values: number;
  /** Characters of event strings read by prefix and suffix lookups (trie steps, slices). */
  affixSteps: number;
  /** Patterns read out of the lookups, a pattern found twice counted twice. */
  reads: number;
  /** Distinct candidates verified with their compiled pattern. */
  verified: number;
}

export function noWork(): MatchWork {
  return { values: 0, affixSteps: 0, reads: 0, verified: 0 };
}
