/**
 * A set of index entries that remembers the last match round that read it. An event array
 * repeating one value (or many values meeting the same "any string" condition) reads the
 * bucket once, so the work stays the array's length plus the entries, never their product.
 */
export interface Bucket<T> {
  items: Set<T>;
  round: number;
}

export function bucket<T>(): Bucket<T> {
  return { items: new Set(), round: 0 };
}

/** Visits the bucket's items unless this round already did. */
export function drain<T>(target: Bucket<T>, round: number, visit: (item: T) => void): void {
  if (target.round === round || target.items.size === 0) return;
  target.round = round;
  for (const item of target.items) visit(item);
}
