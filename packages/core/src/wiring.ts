import * as z from "zod";

/** The `source` of every event Toolbus publishes. */
export const EVENT_SOURCE = "toolbus";

export const DETAIL_TYPES = [
  "ToolCallScheduled",
  "ToolResultReceived",
  "ToolCallApprovalRequested",
  "ToolCallProgress",
] as const;
export type DetailType = (typeof DETAIL_TYPES)[number];

/**
 * Events of the stage's catalog rather than of a call: keyed by toolset, with no run, so the
 * run logs and the stage stream (which keep call events) do not take them; subscriptions and
 * anyone's own rules on the bus do.
 */
export const CATALOG_DETAIL_TYPES = ["ToolDefinitionsChanged"] as const;
export type CatalogDetailType = (typeof CATALOG_DETAIL_TYPES)[number];

/** The recorder's handler id: it appends call events to their run's event log (see busRules). */
export const RECORDER_HANDLER = "recorder";

/** The subscriptions fan-out's handler id: it delivers every Toolbus event that a subscription matches. */
export const SUBSCRIPTIONS_HANDLER = "subscriptions";

/**
 * The name of the rule that hands events to the fan-out: the one rule switched at run time,
 * on only while a subscription exists (app/subscriptions/delivery-rule.ts).
 */
export const SUBSCRIPTIONS_RULE = "subscriptions";

/** The stage stream's handler id: it appends every call event to the stage-wide stream. */
export const STREAM_HANDLER = "stream";

/** The retry driver's handler id: it attempts the webhook deliveries that are due again. */
export const DELIVERIES_HANDLER = "deliveries";

const toolId = z.string().regex(/^[a-z][a-z0-9_]{0,47}$/, "tool ids are snake_case, 1-48 chars");

/**
 * One bus rule: which events (an EventBridge pattern) go to which handler. The handler id is
 * also the entry point's path under functions/ (`tools/web_search` -> functions/tools/web_search.ts)
 * and the local function name, so the stacks and the local runtime cannot disagree.
 */
export interface BusRule {
  name: string;
  description: string;
  pattern: Record<string, unknown>;
  handler: string;
  /**
   * On AWS the handler is fed by the table's change stream of run-log entries instead of by
   * this rule, so no bus rule is deployed for it: it sees exactly what the run logs hold, each
   * run's in the order it was logged, one batch per shard at a time. Locally neither: the
   * table's only writer puts the stream's chunks with the entries (log-sole-stream.ts).
   */
  feed?: "run-logs";
}

/** Whether a deployed stage's bus feeds this rule's handler (one that has no `feed` of its own). */
export const fedByBus = (rule: BusRule): boolean => rule.feed === undefined;

export const toolHandlerId = (id: string) => `tools/${id}`;

/**
 * Registered tools arrive without a deploy, so they cannot have a rule each: one generic
 * handler per implementation kind reads the tool from the catalog per call.
 */
export const REGISTERED_KINDS = ["http", "mcp"] as const;
export const registeredHandlerId = (kind: (typeof REGISTERED_KINDS)[number]) =>
  `registered/${kind}`;

/**
 * A field absent or anything but "direct": `anything-but` alone would not match an event
 * without the field. Scheduled calls the bus runs are those not `dispatch: "direct"` (a call
 * dispatched straight to its handler, a caller waiting, is announced too, but its handler
 * already has it); events the recorder logs are those not `log: "direct"` (whoever announced
 * them, the API or a tool's handler finishing a call, wrote them to the run's log itself).
 */
const NOT_DIRECT = [{ exists: false }, { "anything-but": "direct" }];

/** The handler that runs a tool: its own for a built-in, the generic one for its kind. */
export function handlerIdFor(call: {
  toolId: string;
  implementation?: "builtin" | (typeof REGISTERED_KINDS)[number] | undefined;
}): string {
  const kind = call.implementation ?? "builtin";
  return kind === "builtin" ? toolHandlerId(call.toolId) : registeredHandlerId(kind);
}

/**
 * The one wiring table: a rule per built-in tool for its scheduled calls, one per kind of
 * registered tool, and the recorder for all Toolbus events. Stacks create EventBridge rules from it; the local runtime registers the
 * same rules on the local bus.
 */
export function busRules(toolIds: readonly string[]): BusRule[] {
  const ids = z.array(toolId).parse([...toolIds]);
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index);
  if (duplicate) throw new Error(`The wiring table lists tool ${duplicate} twice.`);
  return [
    ...[...ids].sort().map((id) => ({
      name: `tool-${id}`,
      description: `Runs scheduled calls of ${id}`,
      pattern: {
        source: [EVENT_SOURCE],
        "detail-type": ["ToolCallScheduled"],
        detail: { toolId: [id], dispatch: NOT_DIRECT },
      },
      handler: toolHandlerId(id),
    })),
    ...REGISTERED_KINDS.map((kind) => ({
      name: `registered-${kind}`,
      description: `Runs scheduled calls of registered ${kind} tools`,
      pattern: {
        source: [EVENT_SOURCE],
        "detail-type": ["ToolCallScheduled"],
        detail: { implementation: [kind], dispatch: NOT_DIRECT },
      },
      handler: registeredHandlerId(kind),
    })),
    {
      name: "recorder",
      description: "Appends call events to their run's event log, unless their announcer did",
      pattern: {
        source: [EVENT_SOURCE],
        "detail-type": [...DETAIL_TYPES],
        detail: { log: NOT_DIRECT },
      },
      handler: RECORDER_HANDLER,
    },
    {
      name: SUBSCRIPTIONS_RULE,
      description: "Delivers every Toolbus event to the subscriptions that match it",
      pattern: { source: [EVENT_SOURCE] },
      handler: SUBSCRIPTIONS_HANDLER,
    },
    {
      name: "stream",
      description: "Appends every call event to the stage-wide event stream",
      pattern: { source: [EVENT_SOURCE], "detail-type": [...DETAIL_TYPES] },
      handler: STREAM_HANDLER,
      feed: "run-logs",
    },
  ];
}

/** The sweeper's handler id: it fails calls stuck in RUNNING past their deadline. */
export const SWEEPER_HANDLER = "sweeper";

/** A handler run on a timer rather than by an event pattern. */
export interface ScheduledJob {
  name: string;
  description: string;
  /** EventBridge schedule expression. */
  schedule: string;
  handler: string;
}

/**
 * Timed jobs. On AWS a schedule lives on the default bus (or an SST Cron); locally the same
 * rate() rule is registered on the local bus's default bus.
 */
export const SCHEDULED_JOBS: readonly ScheduledJob[] = [
  {
    name: "sweeper",
    description: "Fails calls stuck in RUNNING past their deadline",
    schedule: "rate(1 minute)",
    handler: SWEEPER_HANDLER,
  },
  {
    name: "deliveries",
    description: "Attempts again the subscription deliveries that are due",
    schedule: "rate(1 minute)",
    handler: DELIVERIES_HANDLER,
  },
];
