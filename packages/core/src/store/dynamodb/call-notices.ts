import { randomBytes } from "node:crypto";
import { GetCommand, type NativeAttributeValue, PutCommand } from "@aws-sdk/lib-dynamodb";
import {
  type AttachedCaller,
  attachedCaller,
  type RelayAnswer,
  type RelayNotification,
  wants,
} from "@toolbus/wire/model/relay";
import type { CallKey, CallNotices } from "../../ports";
import { refusal } from "../../relay/refusal";
import { TABLE } from "../table";
import { type DynamoStoreOptions, guard } from "./client";
import { channelCallerKey, channelMessageSortKey, channelPartition } from "./items";
import { decodeJsonFields, encodeJsonFields } from "./json-text";

type Item = Record<string, NativeAttributeValue>;

export interface DynamoCallNoticesSettings {
  /** Clock, epoch ms. */
  now?: () => number;
}

/** Messages are read within a poll or never: they go soon. */
const MESSAGE_SECONDS = 120;
/** How long `notify` trusts its last look at the caller, per call. */
const CALLER_CACHE_MS = 1_000;
const CACHE_SWEEP_SIZE = 256;

const NO_REQUESTS = "this tool's function relays no requests";

/**
 * The running side's part of the relay through the table (call-channel.ts has the layout):
 * who waits for a call, read from its CALLER item, and messages for that caller, put as MSG#
 * items. Only reads and puts single items, so a function that runs calls but never asks their
 * caller anything (a built-in tool's) carries no more of the DynamoDB client than that; its
 * `ask` is refused at once. DynamoCallChannel runs its callers and messages through this.
 */
export class DynamoCallNotices implements CallNotices {
  readonly #options: DynamoStoreOptions;
  readonly #now: () => number;
  readonly #callers = new Map<string, { caller: AttachedCaller | undefined; until: number }>();
  #lastMessageMs = 0;
  #messageCount = 0;

  constructor(options: DynamoStoreOptions, settings: DynamoCallNoticesSettings = {}) {
    this.#options = options;
    this.#now = settings.now ?? Date.now;
  }

  /** Who waits for the call: an expired or unreadable CALLER item is nobody. */
  async caller(key: CallKey): Promise<AttachedCaller | undefined> {
    const { client, tableName } = this.#options;
    const { Item } = await guard("channel.caller", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: channelCallerKey(key.parentRunId, key.callId),
          ConsistentRead: true,
        }),
      ),
    );
    const caller = Item ? liveCaller(Item, this.#now()) : undefined;
    this.remember(key, caller);
    return caller;
  }

  /** A message for the caller, written only when an attached caller wants it. */
  async notify(key: CallKey, notification: RelayNotification): Promise<void> {
    const cached = this.#callers.get(keyText(key));
    const caller = cached && cached.until > this.#now() ? cached.caller : await this.caller(key);
    if (!wants(caller, notification)) return;
    const { client, tableName } = this.#options;
    await guard("channel.notify", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            pk: channelPartition(key.parentRunId, key.callId),
            sk: this.#messageSortKey(),
            ...encodeJsonFields({ notification }, ["notification"]),
            [TABLE.ttlAttribute]: expiryOf(this.#now(), MESSAGE_SECONDS),
          },
        }),
      ),
    );
  }

  /** Refused at once: this side of the relay takes no requests to the caller. */
  async ask(): Promise<RelayAnswer> {
    return refusal(NO_REQUESTS);
  }

  /** Who waits for the call as of now, for `notify`'s next ~second (one caller attached or left). */
  remember(key: CallKey, caller: AttachedCaller | undefined): void {
    const now = this.#now();
    if (this.#callers.size >= CACHE_SWEEP_SIZE) {
      for (const [text, entry] of this.#callers) {
        if (entry.until <= now) this.#callers.delete(text);
      }
    }
    this.#callers.set(keyText(key), { caller, until: now + CALLER_CACHE_MS });
  }

  #messageSortKey(): string {
    const now = this.#now();
    if (now > this.#lastMessageMs) {
      this.#lastMessageMs = now;
      this.#messageCount = 0;
    } else {
      this.#messageCount++;
    }
    return channelMessageSortKey(
      this.#lastMessageMs,
      this.#messageCount,
      randomBytes(4).toString("hex"),
    );
  }
}

/** The TTL of an item that lives `seconds` from `nowMs`, in epoch seconds. */
export const expiryOf = (nowMs: number, seconds: number) => Math.ceil(nowMs / 1000) + seconds;

/** An item's TTL has not passed (DynamoDB deletes expired items only eventually). */
export function isLive(item: Item, now: number): boolean {
  const expiresAt = item[TABLE.ttlAttribute];
  return typeof expiresAt === "number" && expiresAt * 1000 > now;
}

function liveCaller(item: Item, now: number): AttachedCaller | undefined {
  if (!isLive(item, now)) return undefined;
  const parsed = attachedCaller.safeParse(decodeJsonFields(item, ["caller"]).caller);
  return parsed.success ? parsed.data : undefined;
}

const keyText = (key: CallKey) => `${key.parentRunId}\n${key.callId}`;
