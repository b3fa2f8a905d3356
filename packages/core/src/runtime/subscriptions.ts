import type {
  SubscriptionDispatcher,
  SubscriptionDispatcherDeps,
} from "../app/subscriptions/dispatcher";

/**
 * The two entry points of the subscriptions dispatcher, sharing one dispatcher (and its
 * pattern index) per process: the bus hands it every Toolbus event, a timer has it attempt the
 * deliveries that are due again. Deps are built, and the dispatcher's code loaded, on first
 * use: the API's split bundle keeps it out of its cold start.
 */
export function subscriptionHandlers(
  deps: () => SubscriptionDispatcherDeps | Promise<SubscriptionDispatcherDeps>,
) {
  let dispatcher: Promise<SubscriptionDispatcher> | undefined;
  const get = () => {
    dispatcher ??= (async () => {
      const [{ SubscriptionDispatcher }, built] = await Promise.all([
        import("../app/subscriptions/dispatcher"),
        deps(),
      ]);
      return new SubscriptionDispatcher(built);
    })();
    return dispatcher;
  };
  return {
    dispatch: async (event: unknown): Promise<void> => {
      await (await get()).dispatch(event);
    },
    retryDue: async (): Promise<void> => {
      await (await get()).retryDue();
    },
    /** After a write in this process: the next event reads the subscriptions again. */
    invalidate: () => {
      void dispatcher?.then((loaded) => loaded.invalidate());
    },
  };
}

export type SubscriptionHandlers = ReturnType<typeof subscriptionHandlers>;
