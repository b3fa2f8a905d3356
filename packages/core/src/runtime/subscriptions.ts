import type { SubscriptionFanOut, SubscriptionFanOutDeps } from "../app/subscriptions/fan-out";

/**
 * The two entry points of the subscriptions fan-out, sharing one fan-out (and its
 * pattern index) per process: the bus hands it every Toolbus event, a timer has it attempt the
 * deliveries that are due again. Deps are built, and the fan-out's code loaded, on first
 * use: the API's split bundle keeps it out of its cold start.
 */
export function subscriptionHandlers(
  deps: () => SubscriptionFanOutDeps | Promise<SubscriptionFanOutDeps>,
) {
  let fanOut: Promise<SubscriptionFanOut> | undefined;
  const get = () => {
    fanOut ??= (async () => {
      const [{ SubscriptionFanOut }, built] = await Promise.all([
        import("../app/subscriptions/fan-out"),
        deps(),
      ]);
      return new SubscriptionFanOut(built);
    })();
    return fanOut;
  };
  return {
    /**
     * Delivers one event to the subscriptions it matches. It rejects when a match could be
     * neither sent nor queued for a retry: the bus (Lambda's retries) must hand it over again.
     */
    dispatch: async (event: unknown): Promise<void> => {
      await (await get()).dispatch(event);
    },
    retryDue: async (): Promise<void> => {
      await (await get()).retryDue();
    },
    /** After a write in this process: the next event reads the subscriptions again. */
    invalidate: () => {
      void fanOut?.then((loaded) => loaded.invalidate());
    },
  };
}

export type SubscriptionHandlers = ReturnType<typeof subscriptionHandlers>;
