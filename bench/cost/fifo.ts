import { createHash, randomUUID } from "node:crypto";

/** The SQS requests a FIFO queue and its Lambda event source made. */
export interface QueueCounts {
  /** By the bus's SQS target, one per event it put. */
  sendMessage: number;
  /** By Lambda's poller, one per batch it took (polls that found nothing are not counted). */
  receiveMessage: number;
  /** By Lambda's poller, once a batch's invocation succeeded. */
  deleteMessageBatch: number;
  /** Batches handed to the function, and the messages in them. */
  batches: number;
  messages: number;
  /** Copies content-based deduplication dropped. */
  deduplicated: number;
  /** Messages moved to the dead-letter queue after MAX_RECEIVES failed receives. */
  deadLettered: number;
}

export const emptyQueueCounts = (): QueueCounts => ({
  sendMessage: 0,
  receiveMessage: 0,
  deleteMessageBatch: 0,
  batches: 0,
  messages: 0,
  deduplicated: 0,
  deadLettered: 0,
});

/** The stack's redrive policy: a batch goes to the dead-letter queue after five receives. */
const MAX_RECEIVES = 5;

/** Five minutes: SQS FIFO's deduplication interval. */
const DEDUPLICATION_MS = 5 * 60_000;

/**
 * A FIFO queue with one message group and the Lambda event source that drains it (the stack's
 * `SqsEventSource(queue, { batchSize: 10 })`, no batching window). The model:
 * - every event the bus's target puts is one SendMessage; a body seen in the last 5 minutes is
 *   dropped (content-based deduplication) but still a request;
 * - the poller long-polls: a receive returns as soon as messages are there, with up to 10 of
 *   them, all of the one group. Messages put while a batch is in flight wait for it: FIFO
 *   hands out a group's next messages only once the earlier ones are deleted;
 * - a batch whose invocation succeeds is deleted with one DeleteMessageBatch; a failed one
 *   becomes visible again and is received again, up to five times (the redrive policy).
 * Empty long polls (Lambda keeps several pollers waiting on an idle queue) are a cost per
 * queue and hour, not per call: left out here and stated with the results.
 */
export class FifoQueue {
  counts: QueueCounts = emptyQueueCounts();
  private readonly messages: Array<{ id: string; body: string }> = [];
  private readonly seen = new Map<string, number>();
  private inFlight = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];
  /** Receives of the batch at the head of the queue so far. */
  private attempts = 0;

  constructor(
    private readonly arn: string,
    private readonly consume: (event: unknown) => Promise<{ error?: unknown }>,
  ) {}

  send(body: string): void {
    this.counts.sendMessage += 1;
    const digest = createHash("sha256").update(body).digest("hex");
    const now = Date.now();
    const before = this.seen.get(digest);
    if (before !== undefined && now - before < DEDUPLICATION_MS) {
      this.counts.deduplicated += 1;
      return;
    }
    this.seen.set(digest, now);
    this.messages.push({ id: randomUUID(), body });
    this.schedule();
  }

  /** True while nothing waits and no batch is in flight. */
  get idle(): boolean {
    return !this.inFlight && this.messages.length === 0 && !this.scheduled;
  }

  settled(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    // The poller's open receive answers on a later turn: what the bus put in the same turn
    // arrives in the same batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.poll();
    });
  }

  private async poll(): Promise<void> {
    if (this.inFlight) return;
    if (this.messages.length === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    this.inFlight = true;
    const batch = this.messages.splice(0, 10);
    this.counts.receiveMessage += 1;
    this.counts.batches += 1;
    this.counts.messages += batch.length;
    const event = {
      Records: batch.map((message, index) => ({
        messageId: message.id,
        receiptHandle: `handle-${message.id}`,
        body: message.body,
        attributes: {
          ApproximateReceiveCount: "1",
          SentTimestamp: String(Date.now()),
          MessageGroupId: "toolbus",
          MessageDeduplicationId: createHash("sha256").update(message.body).digest("hex"),
          SequenceNumber: String(index),
        },
        messageAttributes: {},
        md5OfBody: createHash("md5").update(message.body).digest("hex"),
        eventSource: "aws:sqs",
        eventSourceARN: this.arn,
        awsRegion: "us-east-1",
      })),
    };
    const result = await this.consume(event);
    if (result.error) this.attempts += 1;
    else {
      this.counts.deleteMessageBatch += 1;
      this.attempts = 0;
    }
    if (this.attempts >= MAX_RECEIVES) {
      // The redrive policy's maxReceiveCount: the batch goes to the dead-letter queue.
      this.counts.deadLettered += batch.length;
      this.attempts = 0;
    } else if (result.error) this.messages.unshift(...batch);
    this.inFlight = false;
    this.schedule();
    if (this.idle) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
