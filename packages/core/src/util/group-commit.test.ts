import { describe, expect, it } from "vitest";
import { GroupCommit, type ItemOutcome, KeyedGroupCommit } from "./group-commit";

/** A flush that records its batches and answers when released. */
function recorder() {
  const batches: number[][] = [];
  const releases: Array<() => void> = [];
  const flush = (items: number[]) => {
    batches.push(items);
    return new Promise<ItemOutcome<number>[]>((resolve) => {
      releases.push(() =>
        resolve(
          items.map((item) =>
            item < 0
              ? { ok: false, error: new Error(`no ${item}`) }
              : { ok: true, value: item * 2 },
          ),
        ),
      );
    });
  };
  return {
    batches,
    flush,
    releaseAll: () => {
      for (const release of releases.splice(0)) release();
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("group commit", () => {
  it("sends a lone item at once, alone", async () => {
    const { batches, flush, releaseAll } = recorder();
    const line = new GroupCommit(flush, { maxItems: 10 });
    const answer = line.submit(1);
    await tick();
    expect(batches).toEqual([[1]]);
    releaseAll();
    expect(await answer).toBe(2);
  });

  it("groups items that arrive while the line is busy, within the item limit", async () => {
    const { batches, flush, releaseAll } = recorder();
    const line = new GroupCommit(flush, { maxItems: 3, maxInFlight: 1 });
    const first = line.submit(1);
    await tick();
    const rest = [2, 3, 4, 5, 6].map((n) => line.submit(n));
    await tick();
    expect(batches).toEqual([[1]]);
    releaseAll();
    await first;
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    releaseAll();
    await tick();
    releaseAll();
    expect(await Promise.all(rest)).toEqual([4, 6, 8, 10, 12]);
    expect(batches).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it("keeps a batch within its byte limit, but still sends an oversize item alone", async () => {
    const { batches, flush, releaseAll } = recorder();
    const line = new GroupCommit(flush, { maxItems: 10, maxBytes: 10, sizeOf: (n) => n });
    const all = [4, 4, 4, 30, 1].map((n) => line.submit(n));
    for (let i = 0; i < 5; i++) {
      await tick();
      releaseAll();
    }
    await Promise.all(all);
    expect(batches).toEqual([[4, 4], [4], [30], [1]]);
  });

  it("fails only the items that failed, and every item of a flush that threw", async () => {
    const { flush, releaseAll } = recorder();
    const line = new GroupCommit(flush, { maxItems: 10 });
    const outcomes = Promise.allSettled([line.submit(1), line.submit(-1), line.submit(3)]);
    await tick();
    releaseAll();
    expect((await outcomes).map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);

    const broken = new GroupCommit<number, number>(
      async () => {
        throw new Error("down");
      },
      { maxItems: 10 },
    );
    const failed = await Promise.allSettled([broken.submit(1), broken.submit(2)]);
    expect(failed.map((o) => o.status)).toEqual(["rejected", "rejected"]);
  });
});

describe("keyed group commit", () => {
  it("batches items of one key behind its flush in flight, never items of two keys", async () => {
    const batches: Array<[string, number[]]> = [];
    const releases: Array<() => void> = [];
    const line = new KeyedGroupCommit<number, number>(
      (key, items) => {
        batches.push([key, items]);
        return new Promise((resolve) =>
          releases.push(() => resolve(items.map((item) => ({ ok: true, value: item * 10 })))),
        );
      },
      { maxItems: 10 },
    );
    const first = [line.submit("a", 1), line.submit("b", 2)];
    await tick();
    // Each key's first item goes at once, alone; what comes while it is in flight waits.
    const waiting = [line.submit("a", 3), line.submit("a", 4), line.submit("b", 5)];
    await tick();
    expect(batches).toEqual([
      ["a", [1]],
      ["b", [2]],
    ]);
    for (const release of releases.splice(0)) release();
    expect(await Promise.all(first)).toEqual([10, 20]);
    await tick();
    expect(batches.slice(2)).toEqual([
      ["a", [3, 4]],
      ["b", [5]],
    ]);
    for (const release of releases.splice(0)) release();
    expect(await Promise.all(waiting)).toEqual([30, 40, 50]);
    // Nothing is held for a key once its items are answered.
    expect(line.keys).toBe(0);
  });
});
