/**
 * Runs `run` over `items`, at most `width` at a time: each worker takes the next item as soon
 * as its last one ends, so no item waits for a slow batch.
 */
export async function inPool<T>(
  items: readonly T[],
  width: number,
  run: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await run(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
