import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
} from "@aws-sdk/client-eventbridge";
import { PublishError } from "../errors";
import type { DetailType } from "../wiring";
import { EVENT_SOURCE } from "../wiring";
import { detailBytes, MAX_EVENT_DETAIL_BYTES } from "./size";

export interface OutgoingEvent {
  detailType: DetailType;
  detail: { eventKey: string; parentRunId: string } & Record<string, unknown>;
}

export interface PublisherOptions {
  client: EventBridgeClient;
  busName: string;
  /** Attempts per entry, the first included. */
  maxAttempts?: number;
  baseDelayMs?: number;
}

const BATCH = 10;

/**
 * Publishes Toolbus events. PutEvents can accept some entries and refuse others inside one
 * 200 reply, so only the refused entries are sent again, with backoff; whatever is still
 * refused after the last attempt is reported by key in a PublishError.
 */
export class EventPublisher {
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;

  constructor(private readonly options: PublisherOptions) {
    this.maxAttempts = options.maxAttempts ?? 4;
    this.baseDelayMs = options.baseDelayMs ?? 50;
  }

  async publish(events: readonly OutgoingEvent[]): Promise<void> {
    for (const event of events) {
      if (detailBytes(event.detail) > MAX_EVENT_DETAIL_BYTES) {
        // The size guard runs before this; reaching here is a bug, not an upstream failure.
        throw new PublishError(`Event ${event.detail.eventKey} is too large to publish.`);
      }
    }
    for (let start = 0; start < events.length; start += BATCH) {
      await this.publishBatch(events.slice(start, start + BATCH));
    }
  }

  private async publishBatch(events: readonly OutgoingEvent[]): Promise<void> {
    let pending = events.map((event) => ({ event, entry: this.entry(event), error: "" }));
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
          throw new PublishError("The event bus could not be reached.", {
            cause,
            details: pending.map((p) => p.event.detail.eventKey),
          });
        }
        pending = pending.map((p) => ({ ...p, error: "request failed" }));
      }
      if (pending.length === 0) return;
      if (attempt >= this.maxAttempts) {
        throw new PublishError(
          `The bus refused ${pending.length} event(s): ${pending.map((p) => `${p.event.detail.eventKey} (${p.error})`).join(", ")}`,
          { details: pending.map((p) => ({ eventKey: p.event.detail.eventKey, error: p.error })) },
        );
      }
      const backoff = this.baseDelayMs * 2 ** (attempt - 1);
      await new Promise((resolve) => setTimeout(resolve, backoff / 2 + Math.random() * backoff));
    }
  }

  private entry(event: OutgoingEvent): PutEventsRequestEntry {
    return {
      EventBusName: this.options.busName,
      Source: EVENT_SOURCE,
      DetailType: event.detailType,
      Detail: JSON.stringify(event.detail),
    };
  }
}

function failureOf(
  result: { EventId?: string; ErrorCode?: string; ErrorMessage?: string } | undefined,
  failedCount: number | undefined,
): string {
  if (result?.EventId) return "";
  if (!result) return failedCount ? "no result entry" : "";
  return `${result.ErrorCode ?? "error"}: ${result.ErrorMessage ?? "refused"}`;
}
