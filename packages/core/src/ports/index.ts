import type { AuditEntry } from "@toolbus/wire/model/audit";
import type { Approval, CallRecord, CallResult } from "@toolbus/wire/model/call";
import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { RunEvent } from "@toolbus/wire/model/events";
import type { HeldReview } from "@toolbus/wire/model/registered";
import type {
  AttachedCaller,
  RelayAnswer,
  RelayEvent,
  RelayNotification,
  RelayRequest,
} from "@toolbus/wire/model/relay";
import type { RunBudget, RunPolicy } from "@toolbus/wire/model/run";
import type { Delivery, Subscription, SubscriptionSecrets } from "@toolbus/wire/model/subscription";
import type { ToolSpec, ToolsetSpec } from "@toolbus/wire/model/tool";
import type { CatalogDetailType, DetailType } from "../wiring";

/** One Toolbus event to announce on the bus: a call's, keyed by its run, or the catalog's. */
export type OutgoingEvent =
  | {
      detailType: DetailType;
      detail: { eventKey: string; parentRunId: string } & Record<string, unknown>;
    }
  | {
      detailType: CatalogDetailType;
      detail: { eventKey: string; toolset: string } & Record<string, unknown>;
    };

/**
 * Where the application announces events: the bus (EventBridge on AWS, the local bus under
 * `npm start`). Resolves once every event is accepted; rejects with what was refused.
 */
export interface EventSink {
  publish(events: readonly OutgoingEvent[]): Promise<void>;
}

/** A stored spec with its optimistic-concurrency version (incremented on every write). */
export type Versioned<T> = T & { revision: number; updatedAt: string };

export interface CatalogList {
  toolsets: Versioned<ToolsetSpec>[];
  tools: Versioned<ToolSpec>[];
  /** Changes whenever anything listed does (see `util/catalog-version.ts`). */
  version: string;
}

export interface CatalogStore {
  /** Creates or replaces; with `expectedRevision`, fails with ConflictError if it moved on. */
  putToolset(spec: ToolsetSpec, expectedRevision?: number): Promise<Versioned<ToolsetSpec>>;
  putTool(spec: ToolSpec, expectedRevision?: number): Promise<Versioned<ToolSpec>>;
  getToolset(name: string): Promise<Versioned<ToolsetSpec> | undefined>;
  getTool(id: string): Promise<Versioned<ToolSpec> | undefined>;
  /** The whole catalog in toolset order, optionally narrowed. */
  list(filter?: { toolset?: string; category?: string }): Promise<CatalogList>;
  /**
   * Writes a toolset with exactly `tools` (its other tools are deleted), all or nothing;
   * ConflictError when the catalog moved on or an id was taken meanwhile.
   */
  replaceToolset(
    toolset: ToolsetSpec,
    tools: readonly ToolSpec[],
    options?: {
      /** In the same write: the toolset's held review replaced, or with null deleted. */
      review?: HeldReview | null;
      /** The toolset's revision the tools were computed from; ConflictError if it moved on. */
      expectedRevision?: number;
    },
  ): Promise<{ toolset: Versioned<ToolsetSpec>; tools: Versioned<ToolSpec>[] }>;
  /** What is held for review on a registered MCP toolset; undefined when nothing is. */
  getReview(name: string): Promise<HeldReview | undefined>;
  /**
   * Replaces a toolset's held review (null deletes it) and moves the toolset to its next
   * revision, if it is still at `revision`; ConflictError when it moved on.
   */
  setReview(name: string, review: HeldReview | null, revision: number): Promise<void>;
  /** Deletes a toolset, its tools and its held review, all or nothing; returns the removed tool ids. */
  removeToolset(name: string, expectedRevision?: number): Promise<string[]>;
  /** Flips availability.enabled; ConflictError when `expectedRevision` is stale. */
  setEnabled(id: string, enabled: boolean, expectedRevision?: number): Promise<Versioned<ToolSpec>>;
  /**
   * Replaces a tool's whole availability (enabled, modes, minRole); NotFoundError when the tool
   * does not exist, ConflictError when `expectedRevision` is stale.
   */
  setAvailability(
    id: string,
    availability: ToolSpec["availability"],
    expectedRevision?: number,
  ): Promise<Versioned<ToolSpec>>;
}

export type CreateCallOutcome =
  | { created: true; call: CallRecord }
  | { created: false; call: CallRecord };

export interface CallStore {
  /**
   * Conditional put. An existing call with the same id comes back with `created: false`;
   * the caller compares input hashes (same input: idempotent retry; different: 409).
   */
  create(call: CallRecord): Promise<CreateCallOutcome>;
  /**
   * Replaces a call still in the status it was made with (`made`: nothing has run it) by its
   * refusal, which its run's count, made while it was stored, decided. A cancel asked for
   * meanwhile yields to it. False when the call moved on first.
   */
  rewrite(call: CallRecord, made: CallRecord["status"]): Promise<boolean>;
  /**
   * Stores the budget its run's count left a call made as `call` is and not moved on since.
   * False when it moved on first.
   */
  keepBudget(call: CallRecord, budget: RunBudget): Promise<boolean>;
  get(parentRunId: string, callId: string): Promise<CallRecord | undefined>;
  /**
   * PENDING -> RUNNING, atomically, setting startedAt and deadlineAt. Returns the claimed call,
   * or undefined when it was not pending (a duplicate delivery must then not run the tool).
   */
  claim(parentRunId: string, callId: string, deadlineAt: string): Promise<CallRecord | undefined>;
  /**
   * RUNNING (held by the dispatcher, `dispatch: "direct"`) -> PENDING, when the direct
   * dispatch could not start: the call becomes claimable by its bus handler. False when it
   * was no longer held so (its handler did start after all, and may finish it).
   */
  release(parentRunId: string, callId: string): Promise<boolean>;
  /**
   * Asks a call to stop. A call not started yet (PENDING, awaiting approval) fails at once with
   * `result` (`cancelled`); a RUNNING one is marked `cancelRequestedAt` for its handler to see;
   * a finished one is left as it is. Undefined when there is no such call.
   */
  cancel(
    parentRunId: string,
    callId: string,
    result: CallResult,
  ): Promise<{ outcome: "cancelled" | "requested" | "finished"; call: CallRecord } | undefined>;
  /** Whether someone asked this call to stop: what a running call's handler watches. */
  cancelRequested(parentRunId: string, callId: string): Promise<boolean>;
  /**
   * RUNNING -> SUCCEEDED/FAILED with the result; undefined if it was not running (or, with
   * `deadlineAt`, not running to that deadline: claimed again since it was read).
   */
  complete(
    parentRunId: string,
    callId: string,
    result: CallResult,
    expected?: { deadlineAt: string },
  ): Promise<CallRecord | undefined>;
  /**
   * Calls on the index where they ran (RUNNING) whose deadline is before `before` (ISO), oldest
   * deadline first: their handler died, before finishing them (the sweeper fails them) or after
   * storing the result and before it was logged (they have their result: the sweeper announces
   * them again).
   */
  listStuck(before: string, limit?: number): Promise<CallRecord[]>;
  /**
   * PENDING calls waiting since before `before` (ISO), oldest first: recorded, but never
   * claimed (their announcement was lost, or their handler never took them).
   */
  listWaiting(before: string, limit?: number): Promise<CallRecord[]>;
  /**
   * Calls finished without running (refused, decided, cancelled while waiting) before `before`
   * (ISO) whose result is not in the run's log yet: the process stopped between storing and
   * announcing it, the bus refused it, or the recorder has not had it (the outbox; the log's
   * append takes a call off it).
   */
  listUnannounced(before: string, limit?: number): Promise<CallRecord[]>;
  /** The calls of one W3C trace, oldest first, at most `limit` (default 100). */
  listByTrace(traceId: string, limit?: number): Promise<CallRecord[]>;
  /** How many of a run's calls are in each status (at most the first 10,000 calls read). */
  countByStatus(parentRunId: string): Promise<Record<string, number>>;
  /**
   * Decides a call awaiting approval, once: approved, it becomes PENDING for its handler;
   * denied (or expired), it fails with `refusal`. Undefined when it was not awaiting approval.
   */
  decide(
    parentRunId: string,
    callId: string,
    decision: NonNullable<Approval["decision"]>,
    refusal?: CallResult,
  ): Promise<CallRecord | undefined>;
  /** Calls awaiting approval whose approval expires before `before` (ISO), soonest first. */
  listAwaitingApproval(before: string, limit?: number): Promise<CallRecord[]>;
}

export interface EventLogPage {
  events: RunEvent[];
  /** Give back to read on from here; present even on the last page, so followers can poll. */
  cursor: string | undefined;
}

export interface EventLog {
  /**
   * Appends a call's events to its run's log, in the order given, each once: an event the
   * call record marks as logged is left out, and a race to log one leaves one entry. Logging
   * ToolResultReceived also marks the call announced (`resultPublishedAt`). `finisher`: the
   * process that finished the call logs them; `alone` when it announced them all itself and
   * nobody else was told of any, which lets a store log them more cheaply.
   */
  append(
    call: CallRecord,
    events: RunEvent[],
    options?: { finisher?: "alone" | "after-others" },
  ): Promise<void>;
  /** Events in the order they were logged, after `cursor`. */
  read(parentRunId: string, options?: { cursor?: string; limit?: number }): Promise<EventLogPage>;
  /**
   * Resolves when this process appends an event to the run (or `signal` aborts): followers
   * wake at once instead of polling. Appends made by other processes are not seen.
   */
  appended?(parentRunId: string, signal: AbortSignal): Promise<void>;
}

/** A run's totals right after one call was counted, and the run's own policy. */
export interface RunCount {
  calls: number;
  /** Calls of the counted call's tool. */
  toolCalls: number;
  cost: number;
  firstCallAt: string;
  policy?: RunPolicy;
}

export interface RunUsage {
  calls: number;
  cost: number;
  firstCallAt?: string;
  perTool: Record<string, number>;
  policy?: RunPolicy;
}

/** What each run has used, and the policy it set for itself (runs.ts). */
export interface RunStore {
  /** Sets the run's own policy, once: `set: false` with the stored one when it has one. */
  setPolicy(runId: string, policy: RunPolicy): Promise<{ set: boolean; policy: RunPolicy }>;
  /** Counts a call against its run (`sign` -1 takes one back): the totals after it. */
  count(
    runId: string,
    call: { toolId: string; cost: number; at: string },
    sign?: 1 | -1,
  ): Promise<RunCount>;
  /** Counts one tool with one input in a run: how many times now. */
  countRepeat(runId: string, toolId: string, inputHash: string, sign?: 1 | -1): Promise<number>;
  usage(runId: string): Promise<RunUsage | undefined>;
}

/** One event in the stage's stream: its place, and when the stage recorded it. */
export interface StreamEntry {
  seq: number;
  recordedAt: string;
  event: RunEvent;
}

/**
 * Every run's events in one stage-wide order (event-stream.ts). Places are committed in order
 * by one writer at a time, so a reader that has read up to a place never finds a new event
 * before it: following the stream by place alone misses nothing.
 */
export interface EventStream {
  /** Appends at the end, in the order given; an event this writer appended lately is left out. */
  append(events: RunEvent[]): Promise<void>;
  /** The last committed place; 0 while the stream is empty. */
  head(): Promise<number>;
  /**
   * Committed entries of the places after `after`, at most `limit` places, in order; `through`
   * is the last place looked at (read on from there), `head` the head read with them. Places
   * whose entries expired are passed over.
   */
  read(
    after: number,
    limit: number,
  ): Promise<{ entries: StreamEntry[]; through: number; head: number }>;
  /** The first place recorded at or after `time`; head + 1 when there is none yet. */
  placeAt(time: Date): Promise<number>;
  /** Resolves when this process commits to the stream (or `signal` aborts). */
  appended?(signal: AbortSignal): Promise<void>;
}

export interface ApiKeyRecord {
  keyId: string;
  name: string;
  role: string;
  createdAt: string;
  revokedAt?: string;
  lastUsedAt?: string;
  /**
   * The key may act for end users it names (`X-Toolbus-On-Behalf-Of`): a trusted agent
   * backend's. Set by an administrator when the key is created; absent on every other key.
   */
  actsFor?: boolean;
}

export interface KeyStore {
  /** Returns the plaintext key once; only its hash is stored. */
  create(input: {
    name: string;
    role: string;
    keyId?: string;
    key?: string;
    actsFor?: boolean;
  }): Promise<{
    key: string;
    record: ApiKeyRecord;
  }>;
  /** The key's record if it exists and is not revoked. */
  verify(key: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** NotFoundError for an unknown id; revoking twice is fine. */
  revoke(keyId: string): Promise<ApiKeyRecord>;
  /**
   * Resolves when this process revokes the key (or `signal` aborts): its event streams end at
   * once instead of at their next check. Revocations made by other processes are not seen.
   */
  revoked?(keyId: string, signal: AbortSignal): Promise<void>;
}

/** What a cache entry holds: the tool's own output, before any envelope fields. */
export type CachedOutput = Pick<CallResult, "output" | "data" | "citations" | "content">;

export interface CacheEntry {
  value: CachedOutput;
  /** Until then the entry is fresh; after it, usable only as stale-if-error. */
  freshUntil: number;
  /** After this the entry is gone for every purpose (the store may delete it lazily). */
  expiresAt: number;
}

/** Cached tool results by cache key; entries carry their own freshness (epoch ms). */
export interface ResultCache {
  /** An entry not yet expired (fresh, or usable as stale-if-error), or undefined. */
  get(key: string, now: number): Promise<CacheEntry | undefined>;
  put(key: string, value: CachedOutput, freshUntil: number, expiresAt: number): Promise<void>;
}

/** Counts calls per scope in fixed windows, atomically across every process. */
export interface RateLimiter {
  consume(
    scope: string,
    limit: { limit: number; windowSeconds: number },
    now: number,
  ): Promise<RateDecision>;
}

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/** The stage's capability statuses, one per capability, replaced on every check. */
/** Who changed the catalog, keys and registrations: one entry per admin write, newest first. */
export interface AuditLog {
  record(entry: Omit<AuditEntry, "id">): Promise<AuditEntry>;
  list(options: { limit: number; cursor?: string }): Promise<{
    entries: AuditEntry[];
    cursor: string | null;
  }>;
}

export interface CapabilityStore {
  put(status: CapabilityStatus): Promise<CapabilityStatus>;
  get(name: string): Promise<CapabilityStatus | undefined>;
  /** Every stored status, by name. */
  list(): Promise<CapabilityStatus[]>;
}

/** A subscription with its signing secrets, as stored. */
export interface StoredSubscription {
  subscription: Subscription;
  secrets: SubscriptionSecrets;
}

export interface SubscriptionStore {
  create(subscription: Subscription, secrets: SubscriptionSecrets): Promise<void>;
  get(id: string): Promise<StoredSubscription | undefined>;
  /** Every subscription, or one owner's. */
  list(ownerId?: string): Promise<StoredSubscription[]>;
  /** Writes the next state if the stored revision is still `next.revision` (ConflictError if not). */
  replace(next: Subscription, secrets: SubscriptionSecrets): Promise<StoredSubscription>;
  /** One attempt's outcome: the failure streak after it (undefined if the subscription is gone). */
  countAttempt(id: string, ok: boolean): Promise<number | undefined>;
  remove(id: string): Promise<boolean>;
  /** Changes with every write: the fan-out's index is rebuilt only when it moved. */
  version(): Promise<number>;
  /** Whether any subscription is stored, whatever its status (a consistent read). */
  any(): Promise<boolean>;
}

/** One rule of the stage's bus, switched on and off at run time (events/rule-switch.ts). */
export interface RuleSwitch {
  enabled(): Promise<boolean>;
  enable(): Promise<void>;
  disable(): Promise<void>;
}

export interface DeliveryStore {
  /** False when the event already has a delivery for the subscription (a redelivery). */
  create(delivery: Delivery): Promise<boolean>;
  get(subscriptionId: string, eventKey: string): Promise<Delivery | undefined>;
  /** Takes a due delivery for one attempt (its next attempt moves to `until`); undefined if taken. */
  claim(due: Delivery, until: string): Promise<Delivery | undefined>;
  /** Stores an attempt's outcome unless another attempt was recorded since (false then). */
  save(next: Delivery, previousAttempts: number): Promise<boolean>;
  listDue(before: string, limit?: number): Promise<Delivery[]>;
  listDead(
    subscriptionId: string,
    options: { limit: number; cursor?: string },
  ): Promise<{ deliveries: Delivery[]; cursor: string | null }>;
}

/** A call, as the relay between it and its live caller names it. */
export interface CallKey {
  parentRunId: string;
  callId: string;
}

/**
 * Between a running call and the live MCP caller waiting for it (see wire/model/relay.ts):
 * the call's progress and log messages go to the caller, a registered server's requests go to
 * the caller and its answers come back. In memory where the API runs the calls it dispatches
 * (`npm start`); stored beside the call where they run in other functions (AWS). Nothing waits
 * on it but a live caller: without one, messages are dropped and requests refused at once.
 */
export interface CallChannel {
  /**
   * The caller side: a caller now waits for the call (again, after answering a 2026-07-28
   * round). What reaches it from here on comes through the attachment, requests still
   * unanswered first. ConflictError while another principal's caller is attached.
   */
  attach(key: CallKey, caller: AttachedCaller): Promise<CallerAttachment>;
  /**
   * An answer to a relayed request. False (nothing changed) when no such request waits in the
   * call, or it was not asked of this principal.
   */
  answer(
    key: CallKey,
    requestId: string,
    principalId: string,
    answer: RelayAnswer,
  ): Promise<boolean>;
  /** The runner side: who waits for the call, if anyone. */
  caller(key: CallKey): Promise<AttachedCaller | undefined>;
  /** Best effort: a message for the caller, dropped when none waits. */
  notify(key: CallKey, notification: RelayNotification): Promise<void>;
  /**
   * A request for the caller: resolves with its answer, or with an error answer at once when
   * no caller waits that took the method's capability, or once the caller is gone for good.
   * Rejects only when `signal` fires.
   */
  ask(key: CallKey, request: Omit<RelayRequest, "id">, signal: AbortSignal): Promise<RelayAnswer>;
}

/**
 * What a running call needs of the relay: who waits for it, messages for them, and requests
 * to them. A function whose tools never ask their caller (a built-in tool's) is given one
 * that refuses every request at once.
 */
export type CallNotices = Pick<CallChannel, "caller" | "notify" | "ask">;

/** A caller's hold on a call. */
export interface CallerAttachment {
  /**
   * What reaches the caller, as it comes, until `close` is called, or until `signal` fires:
   * what has arrived by then is still yielded, then the events end.
   */
  events(signal: AbortSignal): AsyncIterable<RelayEvent>;
  /**
   * Stops reading. `gone`: the caller will not come back (it has the call's result, or it went
   * away): requests waiting for it are refused. Otherwise (a 2026-07-28 caller answering a
   * round) they wait for its next request.
   */
  close(options: { gone: boolean }): Promise<void>;
}

/** One of a caller's subscriptions to a federated resource (`resources/subscribe` on /mcp). */
export interface McpSubscription {
  uri: string;
  /** The hash of the resource's contents when last seen (subscribed, or a change noticed). */
  hash?: string | undefined;
}

/** What `subscribe` did: stored (or renewed), or refused because the caller holds the most. */
export type McpSubscribeOutcome = { subscribed: true } | { subscribed: false; limit: number };

/**
 * The resources each caller (principal id) subscribed to through `/mcp`, kept in the stage's
 * store so any instance answers the POST that subscribes and any serves the GET stream that
 * tells of changes. Every subscription expires a while after it was last made (subscribing
 * again renews it), and a caller holds a bounded number.
 */
export interface McpSubscriptions {
  /** Stores (or renews) the subscription, with the contents' hash as of now. */
  subscribe(principalId: string, uri: string, hash?: string): Promise<McpSubscribeOutcome>;
  /** Removes it; one never made is no error. */
  unsubscribe(principalId: string, uri: string): Promise<void>;
  /** The caller's live subscriptions, in no particular order. */
  list(principalId: string): Promise<McpSubscription[]>;
  /** Records the hash a stream last saw, when the subscription still exists (its TTL kept). */
  seen(principalId: string, uri: string, hash: string): Promise<void>;
}

/** One MCP task a caller made (2025-11-25 `tasks/list`): the call it is, and how long it is kept. */
export interface TaskEntry {
  runId: string;
  callId: string;
  /** When the task was created: its call's `scheduledAt` (ISO 8601). */
  createdAt: string;
  /** How long after `createdAt` the task stays listed, ms (the task's `ttl`). */
  ttlMs: number;
}

/** A page of a caller's tasks, newest first; `next` is where the following page starts. */
export interface TaskPage {
  tasks: TaskEntry[];
  next?: string;
}

/**
 * The MCP tasks each caller (principal id) made, newest first. The call store has no index by
 * caller, and plain calls need none: only a call made as a task is written here, and it drops
 * out once its ttl has passed (the call itself stays readable by its ids).
 */
export interface TaskIndex {
  /** Records (or records again, with its new ttl) one of the caller's tasks. */
  add(principalId: string, entry: TaskEntry): Promise<void>;
  /** The caller's task with these ids and creation time, while it is kept. */
  get(principalId: string, task: Omit<TaskEntry, "ttlMs">): Promise<TaskEntry | undefined>;
  /**
   * Up to `limit` of the caller's live tasks, newest first, after `after` (a page's `next`).
   * A malformed `after` is a ValidationError.
   */
  list(principalId: string, page: { limit: number; after?: string }): Promise<TaskPage>;
}
