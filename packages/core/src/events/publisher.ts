import {
  DescribeEventBusCommand,
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
} from "@aws-sdk/client-eventbridge";
import type { DependencyProbe } from "../app/health/service";
import { PublishError } from "../errors";
import type { EventSink, OutgoingEvent } from "../ports";
import { GroupCommit, type ItemOutcome } from "../util/group-commit";
import { EVENT_SOURCE } from "../wiring";
import { MAX_EVENT_DETAIL_BYTES } from "./size";

export type { OutgoingEvent } from "../ports";

export interface PublisherOptions {
  client: EventBridgeClient;
  busName: string;
  /** Attempts per entry, the first included. */
  maxAttempts?: number;
  baseDelayMs?: number;
}

/** PutEvents takes at most ten entries and 256 KB in one request. */
const BATCH = 10;
const MAX_REQUEST_BYTES = 256 * 1024;

/**
 * Publishes Toolbus events. Concurrent publishes share PutEvents requests (group commit: up to
 * ten entries, sent at once when the line is free). PutEvents can accept some entries and
 * refuse others inside one 200 reply, so only the refused entries are sent again, with
 * backoff; whatever is still refused after the last attempt is reported by key in a
 * PublishError.
 */
export class EventPublisher implements EventSink {
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  readonly #line: GroupCommit<Prepared, void>;

  constructor(private readonly options: PublisherOptions) {
    this.maxAttempts = options.maxAttempts ?? 4;
    this.baseDelayMs = options.baseDelayMs ?? 50;
    this.#line = new GroupCommit((events) => this.publishBatch(events), {
      maxItems: BATCH,
      maxBytes: MAX_REQUEST_BYTES,
      sizeOf: (prepared) => prepared.bytes,
    });
  }

  async publish(events: readonly OutgoingEvent[]): Promise<void> {
    const prepared = events.map((event) => this.prepare(event));
    const outcomes = await Promise.allSettled(prepared.map((entry) => this.#line.submit(entry)));
    const failures = outcomes.flatMap((outcome, i) =>
      outcome.status === "rejected" ? [{ event: events[i], error: outcome.reason }] : [],
    );
    if (failures.length === 0) return;
    const unreachable = failures.find((f) => f.error instanceof Unreachable);
    if (unreachable) {
      throw new PublishError("The event bus could not be reached.", {
        cause: (unreachable.error as Unreachable).cause,
        details: failures.map((f) => f.event?.detail.eventKey),
      });
    }
    throw new PublishError(
      `The bus refused ${failures.length} event(s): ${failures.map((f) => `${f.event?.detail.eventKey} (${String(f.error)})`).join(", ")}`,
      {
        details: failures.map((f) => ({
          eventKey: f.event?.detail.eventKey,
          error: String(f.error),
        })),
      },
    );
  }

  private async publishBatch(events: readonly Prepared[]): Promise<ItemOutcome<void>[]> {
    const outcomes: ItemOutcome<void>[] = events.map(() => ({ ok: true, value: undefined }));
    let pending = events.map(({ entry }, index) => ({ index, entry, error: "" }));
    for (let attempt = 1; pending.length > 0; attempt++) {
      try {
        const reply = await this.options.client.send(
          new PutEventsCommand({ Entries: pending.map((p) => p.entry) }),
        );
        const results = reply.Entries ?? [];
        pending = pending
          .map((p, i) => ({ ...p, error: failureOf(results[i], reply.FailedEntryCount) }))
          .filter((p) => p.error !== "");
      } catch (cause) {
        if (attempt >= this.maxAttempts) {
          for (const p of pending) outcomes[p.index] = { ok: false, error: new Unreachable(cause) };
          return outcomes;
        }
        pending = pending.map((p) => ({ ...p, error: "request failed" }));
      }
      if (pending.length === 0) return outcomes;
      if (attempt >= this.maxAttempts) {
        for (const p of pending) outcomes[p.index] = { ok: false, error: p.error };
        return outcomes;
      }
      const backoff = this.baseDelayMs * 2 ** (attempt - 1);
      await new Promise((resolve) => setTimeout(resolve, backoff / 2 + Math.random() * backoff));
    }
    return outcomes;
  }

  /** The entry, serialized once, with its size as EventBridge counts it. */
  private prepare(event: OutgoingEvent): Prepared {
    const detail = JSON.stringify(event.detail);
    const detailSize = Buffer.byteLength(detail);
    if (detailSize > MAX_EVENT_DETAIL_BYTES) {
      // The size guard runs before this; reaching here is a bug, not an upstream failure.
      throw new PublishError(`Event ${event.detail.eventKey} is too large to publish.`);
    }
    return {
      entry: {
        EventBusName: this.options.busName,
        Source: EVENT_SOURCE,
        DetailType: event.detailType,
        Detail: detail,
      },
      bytes: EVENT_SOURCE.length + event.detailType.length + detailSize,
    };
  }
}

/** Every attempt to reach the bus failed: the request itself, not an entry in it. */
class Unreachable {
  constructor(readonly cause: unknown) {}
}

interface Prepared {
  entry: PutEventsRequestEntry;
  bytes: number;
}

function failureOf(
  result: { EventId?: string; ErrorCode?: string; ErrorMessage?: string } | undefined,
  failedCount: number | undefined,
): string {
  if (result?.EventId) return "";
  if (!result) return failedCount ? "no result entry" : "";
  return `${result.ErrorCode ?? "error"}: ${result.ErrorMessage ?? "refused"}`;
}

/**
 * The bus answers when DescribeEventBus of the stage's bus does: it publishes nothing, so a
 * health check never reaches a subscriber.
 */
export function busProbe(client: EventBridgeClient, busName: string): DependencyProbe {
  return {
    name: "eventbridge",
    async check(abortSignal) {
      await client.send(new DescribeEventBusCommand({ Name: busName }), { abortSignal });
    },
  };
}
