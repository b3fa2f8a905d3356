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
