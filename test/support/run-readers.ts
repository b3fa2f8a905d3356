/**
 * A reader paging a run's events with `?cursor=` every `everyMs`, as a polling client does,
 * until `done()` holds and three pages in a row come back empty. Returns the event keys it
 * read, in order.
 */
export async function readWithCursor(
  page: (query: string) => Promise<Response>,
  options: { everyMs: number; done: () => boolean },
): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  for (let idle = 0; !options.done() || idle < 3; ) {
    const response = await page(cursor ? `?cursor=${cursor}` : "");
    const body = (await response.json()) as {
      events: { eventKey: string }[];
      cursor: string | null;
    };
    keys.push(...body.events.map((event) => event.eventKey));
    cursor = body.cursor ?? cursor;
    if (options.done() && body.events.length === 0) idle++;
    await new Promise((resolve) => setTimeout(resolve, options.everyMs));
  }
  return keys;
}

/** `calls` calls into one run from `writers` clients at once; each answer must be 200. */
export async function callConcurrently(
  post: (callId: string) => Promise<Response>,
  options: { calls: number; writers: number },
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: options.writers }, async () => {
      while (next < options.calls) {
        const response = await post(`c${next++}`);
        if (response.status !== 200) {
          throw new Error(`a call answered ${response.status}: ${await response.text()}`);
        }
      }
    }),
  );
}
