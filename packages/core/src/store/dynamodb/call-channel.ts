import { randomUUID } from "node:crypto";
import {
  DeleteCommand,
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  type AttachedCaller,
  accepts,
  NO_SUCH_METHOD,
  type RelayAnswer,
  type RelayEvent,
  type RelayNotification,
  type RelayRequest,
  relayAnswer,
  relayNotification,
  relayRequest,
} from "@toolbus/wire/model/relay";
import { ConflictError, UnavailableError } from "../../errors";
import type { CallChannel, CallerAttachment, CallKey } from "../../ports";
import { refusal } from "../../relay/refusal";
import { TABLE } from "../table";
import { DynamoCallNotices, expiryOf, isLive } from "./call-notices";
import { type DynamoStoreOptions, guard, isConditionFailure, parseInput, queryAll } from "./client";
import {
  CHANNEL_ANSWER_PREFIX,
  CHANNEL_MESSAGE_PREFIX,
  CHANNEL_REQUEST_PREFIX,
  channelAnswerKey,
  channelCallerKey,
  channelMessagesFrom,
  channelPartition,
  channelRequestKey,
} from "./items";
import { decodeJsonFields, encodeJsonFields } from "./json-text";

type Item = Record<string, NativeAttributeValue>;

export interface DynamoCallChannelSettings {
  /** How often a waiting request looks for its answer, and an attachment for news (ms). */
  pollMs?: number;
  /**
   * How long an attached caller counts as there without reading (s): an attachment renews it
   * while it reads; one that neither reads nor comes back is gone once it ran out. Also how
   * long requests and answers outlive the last sign of life of whoever waits on them.
   */
  leaseSeconds?: number;
  /** Clock, epoch ms. */
  now?: () => number;
}

const DEFAULT_POLL_MS = 100;
/**
 * Long enough for a 2026-07-28 caller to come back with a person's answer to an elicitation:
 * past the 10 minutes its sealed round holds (/mcp's relayed-call.ts), so the round's state,
 * not the lease, decides how long a caller may take.
 */
const DEFAULT_LEASE_SECONDS = 660;
/** How often a waiting request checks that its caller is still there. */
const LIVENESS_MS = 1_000;
const TRANSACTION_ATTEMPTS = 3;

const GONE = "The caller stopped waiting for this call.";
const ANOTHER_CALLER = "Another key waits for this call.";
const NOT_PASSED_ON = "The request could not be passed on to the caller.";

/**
 * The relay between a running call and its live caller where they run in different functions
 * (AWS): stored beside the call, in a partition of its own (items.ts's channel keys), read by
 * polling with consistent reads. Same behaviour as memoryCallChannel:
 *
 * - CALLER: who waits (`attach` overwrites it, `close({ gone: true })` deletes it), with a
 *   lease (expiresAt) that the attachment renews while it reads. An expired or unreadable one
 *   is nobody.
 * - REQ#<id>: a request and the principal it was asked of; the asking side renews its lease
 *   while it waits and deletes it if it gives up (its signal fired, its caller went away).
 * - ANS#<id>: the answer, put only while the request is there, asked of that principal, and
 *   unanswered (one transaction). A caller gone for good answers what waits for it with a
 *   refusal, the same way, so the asking side only ever reads ANS#<id>.
 * - MSG#<time>#<count>#<random>: a message, written only when an attached caller wants it.
 *
 * Answered requests and their answers stay until their TTL; nothing yields them again. Who
 * waits and the messages (`caller`, `notify`) are DynamoCallNotices', the running side's part,
 * which this shares.
 */
export class DynamoCallChannel implements CallChannel {
  readonly #options: DynamoStoreOptions;
  readonly #pollMs: number;
  readonly #leaseSeconds: number;
  readonly #now: () => number;
  readonly #notices: DynamoCallNotices;

  constructor(options: DynamoStoreOptions, settings: DynamoCallChannelSettings = {}) {
    this.#options = options;
    this.#pollMs = settings.pollMs ?? DEFAULT_POLL_MS;
    this.#leaseSeconds = settings.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
    this.#now = settings.now ?? Date.now;
    this.#notices = new DynamoCallNotices(options, { now: this.#now });
  }

  async attach(key: CallKey, caller: AttachedCaller): Promise<CallerAttachment> {
    const { client, tableName } = this.#options;
    const attachId = randomUUID();
    const attachedAt = this.#now();
    try {
      await guard("channel.attach", tableName, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...channelCallerKey(key.parentRunId, key.callId),
              ...encodeJsonFields({ caller }, ["caller"]),
              principalId: caller.principalId,
              attachId,
              attachedAt,
              [TABLE.ttlAttribute]: this.#expiry(this.#leaseSeconds),
            },
            // A call's relay is its own caller's: another key's live attachment stays.
            ConditionExpression:
              "attribute_not_exists(sk) OR principalId = :principal OR #ttl < :now",
            ExpressionAttributeNames: { "#ttl": TABLE.ttlAttribute },
            ExpressionAttributeValues: {
              ":principal": caller.principalId,
              ":now": Math.floor(attachedAt / 1000),
            },
          }),
        ),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new ConflictError(ANOTHER_CALLER);
      throw error;
    }
    this.#notices.remember(key, caller);
    return new Attachment(this, key, attachId, attachedAt);
  }

  async answer(
    key: CallKey,
    requestId: string,
    principalId: string,
    answer: RelayAnswer,
  ): Promise<boolean> {
    const checked = parseInput(relayAnswer, answer, "answer");
    if (!relayRequest.shape.id.safeParse(requestId).success) return false;
    const { client, tableName } = this.#options;
    const { parentRunId, callId } = key;
    for (let attempt = 1; ; attempt++) {
      try {
        await guard("channel.answer", tableName, () =>
          client.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  ConditionCheck: {
                    TableName: tableName,
                    Key: channelRequestKey(parentRunId, callId, requestId),
                    ConditionExpression:
                      "attribute_exists(pk) AND principalId = :principal AND #ttl > :now",
                    ExpressionAttributeNames: { "#ttl": TABLE.ttlAttribute },
                    ExpressionAttributeValues: {
                      ":principal": principalId,
                      ":now": Math.floor(this.#now() / 1000),
                    },
                  },
                },
                {
                  Put: {
                    TableName: tableName,
                    Item: this.#answerItem(key, requestId, checked),
                    ConditionExpression: "attribute_not_exists(pk)",
                  },
                },
              ],
            }),
          ),
        );
        return true;
      } catch (error) {
        const codes = cancellationCodes(error);
        if (codes === undefined) throw error;
        if (codes.includes("ConditionalCheckFailed")) return false;
        // Another write to the same items at the same moment: look again.
        if (attempt >= TRANSACTION_ATTEMPTS) {
          throw new UnavailableError("The data store is busy; retry later.", {
            cause: error,
            context: { operation: "channel.answer", tableName, codes },
          });
        }
      }
    }
  }

  caller(key: CallKey): Promise<AttachedCaller | undefined> {
    return this.#notices.caller(key);
  }

  notify(key: CallKey, notification: RelayNotification): Promise<void> {
    return this.#notices.notify(key, notification);
  }

  async ask(
    key: CallKey,
    asked: Omit<RelayRequest, "id">,
    signal: AbortSignal,
  ): Promise<RelayAnswer> {
    // Rejects only when `signal` fires: a request the table cannot take is refused.
    let caller: AttachedCaller | undefined;
    try {
      caller = await this.caller(key);
    } catch {
      return refusal(NOT_PASSED_ON);
    }
    if (!caller || !accepts(caller, asked.method)) {
      return refusal(`The caller of this call does not take ${asked.method}.`, NO_SUCH_METHOD);
    }
    if (signal.aborted) throw signal.reason;
    const request: RelayRequest = { ...asked, id: randomUUID() };
    const { client, tableName } = this.#options;
    const { parentRunId, callId } = key;
    const requestKey = channelRequestKey(parentRunId, callId, request.id);
    try {
      await guard("channel.ask", tableName, () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: {
              ...requestKey,
              ...encodeJsonFields({ request }, ["request"]),
              principalId: caller.principalId,
              askedAt: this.#now(),
              [TABLE.ttlAttribute]: this.#expiry(this.#leaseSeconds),
            },
          }),
        ),
      );
    } catch {
      return refusal(NOT_PASSED_ON);
    }
    const forget = () => this.#delete(requestKey).catch(() => undefined);

    let checked = this.#now();
    let renewed = this.#now();
    for (;;) {
      if (signal.aborted) {
        await forget();
        throw signal.reason;
      }
      try {
        const answer = await this.#answerOf(key, request.id);
        if (answer) {
          // Answered: the request leaves the call's items, so no poll reads it again.
          await forget();
          return answer;
        }
        await pause(this.#pollMs, signal);
        if (signal.aborted) continue;
        const now = this.#now();
        if (now - checked >= LIVENESS_MS) {
          checked = now;
          // Gone without saying so (its lease ran out), or went between our look and our put.
          if (!(await this.caller(key))) {
            const last = await this.#answerOf(key, request.id);
            if (last) {
              await forget();
              return last;
            }
            await forget();
            return refusal(GONE);
          }
        }
        if (now - renewed >= (this.#leaseSeconds * 1000) / 3) {
          renewed = now;
          await this.#renew(requestKey, "attribute_exists(pk)", {});
        }
      } catch (error) {
        // An outage passes (the next look may get through); anything else will not.
        if (!(error instanceof UnavailableError)) {
          await forget();
          return refusal(NOT_PASSED_ON);
        }
        await pause(this.#pollMs, signal);
      }
    }
  }

  // --- for Attachment ---

  get pollMs(): number {
    return this.#pollMs;
  }

  get leaseMs(): number {
    return this.#leaseSeconds * 1000;
  }

  now(): number {
    return this.#now();
  }

  /**
   * What an attachment has not seen yet: messages after `after` (a sort key) and requests not
   * in `seen`, unanswered and unexpired, in the order they came. `after` moves past every
   * message read, readable or not; `settled` names the requests found answered, for `seen`
   * (so answers are looked up only when a request not seen before turns up).
   */
  async news(
    key: CallKey,
    after: string,
    seen: ReadonlySet<string>,
  ): Promise<{ events: RelayEvent[]; after: string; settled: string[] }> {
    const { client, tableName } = this.#options;
    const items = await guard("channel.events", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        // Past the last message read: later messages, then every request (REQ# > MSG#).
        KeyConditionExpression: "pk = :pk AND sk > :after",
        ExpressionAttributeValues: {
          ":pk": channelPartition(key.parentRunId, key.callId),
          ":after": after,
        },
        ConsistentRead: true,
      }),
    );
    const now = this.#now();
    const timed: { at: number; order: number; event: RelayEvent }[] = [];
    const requests: { at: number; request: RelayRequest }[] = [];
    let last = after;
    for (const item of items) {
      const sk = String(item.sk);
      if (sk.startsWith(CHANNEL_MESSAGE_PREFIX)) {
        if (sk > last) last = sk;
        const parsed = relayNotification.safeParse(
          decodeJsonFields(item, ["notification"]).notification,
        );
        if (parsed.success) {
          timed.push({
            at: Number(sk.slice(CHANNEL_MESSAGE_PREFIX.length).split("#")[0]),
            order: timed.length,
            event: { type: "notification", notification: parsed.data },
          });
        }
      } else if (sk.startsWith(CHANNEL_REQUEST_PREFIX) && !seen.has(requestIdOf(sk))) {
        const request = requestOfItem(item, now);
        if (request) requests.push({ at: Number(item.askedAt) || 0, request });
      }
    }
    const settled: string[] = [];
    if (requests.length > 0) {
      const answered = await this.#answeredIds(key);
      for (const { at, request } of requests) {
        if (answered.has(request.id)) settled.push(request.id);
        else timed.push({ at, order: timed.length, event: { type: "request", request } });
      }
    }
    timed.sort((a, b) => a.at - b.at || a.order - b.order);
    return { events: timed.map(({ event }) => event), after: last, settled };
  }

  /** Renews an attachment's lease; false once another attachment holds the call, or none. */
  renewCaller(key: CallKey, attachId: string): Promise<boolean> {
    return this.#renew(channelCallerKey(key.parentRunId, key.callId), "attachId = :attach", {
      ":attach": attachId,
    });
  }

  /** The attachment's caller will not come back: unless another one attached since. */
  async leave(key: CallKey, attachId: string): Promise<void> {
    const { client, tableName } = this.#options;
    const { parentRunId, callId } = key;
    try {
      await guard("channel.close", tableName, () =>
        client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: channelCallerKey(parentRunId, callId),
            ConditionExpression: "attachId = :attach",
            ExpressionAttributeValues: { ":attach": attachId },
          }),
        ),
      );
    } catch (error) {
      if (isConditionFailure(error)) return;
      throw error;
    }
    this.#notices.remember(key, undefined);
    const answered = await this.#answeredIds(key);
    const waiting = await guard("channel.close", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :req)",
        ExpressionAttributeValues: {
          ":pk": channelPartition(parentRunId, callId),
          ":req": CHANNEL_REQUEST_PREFIX,
        },
        ConsistentRead: true,
      }),
    );
    const refused = refusal(GONE);
    await Promise.all(
      waiting
        .map((item) => requestIdOf(String(item.sk)))
        .filter((id) => !answered.has(id))
        .map(async (id) => {
          try {
            await guard("channel.close", tableName, () =>
              client.send(
                new PutCommand({
                  TableName: tableName,
                  Item: this.#answerItem(key, id, refused),
                  // The caller's own answer, if it came first, stands.
                  ConditionExpression: "attribute_not_exists(pk)",
                }),
              ),
            );
          } catch (error) {
            if (!isConditionFailure(error)) throw error;
          }
        }),
    );
  }

  // --- internals ---

  #answerItem(key: CallKey, requestId: string, answer: RelayAnswer): Item {
    return {
      ...channelAnswerKey(key.parentRunId, key.callId, requestId),
      ...encodeJsonFields({ answer }, ["answer"]),
      [TABLE.ttlAttribute]: this.#expiry(this.#leaseSeconds),
    };
  }

  async #answerOf(key: CallKey, requestId: string): Promise<RelayAnswer | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("channel.ask", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: channelAnswerKey(key.parentRunId, key.callId, requestId),
          ConsistentRead: true,
        }),
      ),
    );
    if (!Item) return undefined;
    const parsed = relayAnswer.safeParse(decodeJsonFields(Item, ["answer"]).answer);
    return parsed.success ? parsed.data : refusal("The caller's answer could not be read.");
  }

  async #answeredIds(key: CallKey): Promise<Set<string>> {
    const { client, tableName } = this.#options;
    const items = await guard("channel.answers", tableName, () =>
      queryAll(client, {
        TableName: tableName,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :ans)",
        ExpressionAttributeValues: {
          ":pk": channelPartition(key.parentRunId, key.callId),
          ":ans": CHANNEL_ANSWER_PREFIX,
        },
        ProjectionExpression: "sk",
        ConsistentRead: true,
      }),
    );
    return new Set(items.map((item) => String(item.sk).slice(CHANNEL_ANSWER_PREFIX.length)));
  }

  async #renew(
    itemKey: { pk: string; sk: string },
    condition: string,
    values: Record<string, NativeAttributeValue>,
  ): Promise<boolean> {
    const { client, tableName } = this.#options;
    try {
      await guard("channel.renew", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: itemKey,
            UpdateExpression: "SET #ttl = :ttl",
            ConditionExpression: condition,
            ExpressionAttributeNames: { "#ttl": TABLE.ttlAttribute },
            ExpressionAttributeValues: { ...values, ":ttl": this.#expiry(this.#leaseSeconds) },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async #delete(itemKey: { pk: string; sk: string }): Promise<void> {
    const { client, tableName } = this.#options;
    await guard("channel.forget", tableName, () =>
      client.send(new DeleteCommand({ TableName: tableName, Key: itemKey })),
    );
  }

  #expiry(seconds: number): number {
    return expiryOf(this.#now(), seconds);
  }
}

/** One caller's hold on a call: polls the call's partition while it is read. */
class Attachment implements CallerAttachment {
  #closed = false;
  readonly #wakers = new Set<() => void>();

  constructor(
    private readonly channel: DynamoCallChannel,
    private readonly key: CallKey,
    private readonly attachId: string,
    private readonly attachedAt: number,
  ) {}

  async *events(signal: AbortSignal): AsyncGenerator<RelayEvent> {
    const { channel, key } = this;
    const seen = new Set<string>();
    let after = channelMessagesFrom(this.attachedAt);
    let renewing = true;
    let renewed = channel.now();
    while (!this.#closed) {
      // Once stopped, one last read: what was written by then still goes out.
      const last = signal.aborted;
      if (renewing && channel.now() - renewed >= channel.leaseMs / 3) {
        renewed = channel.now();
        renewing = await channel.renewCaller(key, this.attachId);
      }
      const news = await channel.news(key, after, seen);
      after = news.after;
      for (const id of news.settled) seen.add(id);
      for (const event of news.events) {
        if (this.#closed) return;
        if (event.type === "request") seen.add(event.request.id);
        yield event;
      }
      if (this.#closed || last) return;
      await pause(channel.pollMs, signal, this.#wakers);
    }
  }

  async close({ gone }: { gone: boolean }): Promise<void> {
    this.#closed = true;
    for (const wake of [...this.#wakers]) wake();
    if (gone) await this.channel.leave(this.key, this.attachId);
  }
}

/** Waits `ms`, or less when `signal` fires or a waker is called. */
function pause(ms: number, signal: AbortSignal, wakers?: Set<() => void>): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      wakers?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    wakers?.add(done);
  });
}

const requestIdOf = (sortKey: string) => sortKey.slice(CHANNEL_REQUEST_PREFIX.length);

/** A stored request still waiting for its answer, or undefined if expired or unreadable. */
function requestOfItem(item: Item, now: number): RelayRequest | undefined {
  if (!isLive(item, now)) return undefined;
  const parsed = relayRequest.safeParse(decodeJsonFields(item, ["request"]).request);
  if (!parsed.success || parsed.data.id !== requestIdOf(String(item.sk))) return undefined;
  return parsed.data;
}

/**
 * The reason codes of a cancelled transaction, or undefined when the error is not one (an
 * outage, already mapped by guard, or a bug).
 */
function cancellationCodes(error: unknown): string[] | undefined {
  if (!(error instanceof Error) || error.name !== "TransactionCanceledException") return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return (reasons ?? []).map((reason) => reason.Code ?? "None");
}
