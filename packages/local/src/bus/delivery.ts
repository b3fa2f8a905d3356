import { randomUUID } from "node:crypto";
import { DeadLetterStore } from "./dead-letters";

/** One event on its way to one target. */
export interface DeliveryJob {
  eventId: string;
  busName: string;
  ruleName: string;
  targetId: string;
  targetArn: string;
  input: unknown;
  /** Retries after the first attempt; EventBridge's RetryPolicy.MaximumRetryAttempts. */
  maxRetries: number;
  /** Give up once the event is older than this; RetryPolicy.MaximumEventAgeInSeconds. */
  maxAgeMs: number;
  deadLetterArn?: string;
  enqueuedAt: number;
  /** The dead letter this delivery is a redrive of: it goes once the delivery succeeds. */
  redriveOf?: string;
}

export interface DeliveryOptions {
  /**
   * First retry delay; later ones double, with jitter, up to maxDelayMs: EventBridge's
   * exponential backoff with randomized delay. Tests make both short.
   */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Deliveries running at once per target; more wait in that target's line, as with each
   * function's own concurrency on AWS: a slow target never holds up another's deliveries.
   */
  maxConcurrency: number;
  /** Extra copies of every delivery, to prove consumers cope with at-least-once delivery. */
  duplicateDeliveries: number;
}

export type Invoke = (job: DeliveryJob) => Promise<void>;

interface Line {
  waiting: Array<{ job: DeliveryJob; attempt: number }>;
  active: number;
}

export interface DeliveryStats {
  delivered: number;
  failedAttempts: number;
  deadLettered: number;
}

/**
 * Delivers asynchronously, at least once, with bounded retries and a dead-letter list.
 * PutEvents returns before any target runs, as on AWS, so publishers never wait on consumers.
 */
export class DeliveryQueue {
  readonly stats: DeliveryStats = { delivered: 0, failedAttempts: 0, deadLettered: 0 };
  /** One line per target: its waiting deliveries and how many of its own are running. */
  private readonly lines = new Map<string, Line>();
  private readonly retrying = new Map<NodeJS.Timeout, { job: DeliveryJob; attempt: number }>();
  private outstanding = 0;
  private idleWaiters: Array<() => void> = [];
  /** Deliveries still under way per event, so an event's end can be reported once. */
  private readonly perEvent = new Map<string, number>();
  /** Called once every delivery of an event has finished (delivered or dead-lettered). */
  onEventDone?: (eventId: string) => void;
  private closed = false;
  private pumpScheduled = false;

  constructor(
    private readonly invoke: Invoke,
    private readonly options: DeliveryOptions,
    readonly deadLetters: DeadLetterStore = new DeadLetterStore(),
  ) {}

  enqueue(job: DeliveryJob): void {
    if (this.closed) return;
    for (let copy = 0; copy <= this.options.duplicateDeliveries; copy++) {
      this.outstanding++;
      this.perEvent.set(job.eventId, (this.perEvent.get(job.eventId) ?? 0) + 1);
      this.lineOf(job).waiting.push({ job, attempt: 1 });
    }
    // Start targets on a later turn of the event loop, so PutEvents has answered first and no
    // target's synchronous work can delay or fail the publisher's call.
    if (!this.pumpScheduled) {
      this.pumpScheduled = true;
      setImmediate(() => {
        this.pumpScheduled = false;
        this.pump();
      });
    }
  }

  /** Resolves once every accepted delivery has been delivered or dead-lettered. */
  drain(): Promise<void> {
    if (this.outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops retrying; what was still pending is dead-lettered so it stays visible. */
  close(): void {
    this.closed = true;
    for (const timer of this.retrying.keys()) clearTimeout(timer);
    const pending = [
      ...[...this.lines.values()].flatMap((line) => line.waiting.splice(0)),
      ...this.retrying.values(),
    ];
    this.retrying.clear();
    for (const { job, attempt } of pending) {
      // The journal (when there is one) delivers these again after a restart: a dead letter
      // kept on disk as well would deliver them twice.
      this.deadLetter(job, attempt - 1, "the bus was closed before delivery", { transient: true });
    }
  }

  private lineOf(job: DeliveryJob): Line {
    let line = this.lines.get(job.targetArn);
    if (!line) {
      line = { waiting: [], active: 0 };
      this.lines.set(job.targetArn, line);
    }
    return line;
  }

  private pump(): void {
    for (const line of this.lines.values()) this.pumpLine(line);
  }

  private pumpLine(line: Line): void {
    while (line.active < this.options.maxConcurrency && line.waiting.length > 0) {
      const next = line.waiting.shift();
      if (next) this.run(line, next.job, next.attempt);
    }
  }

  private run(line: Line, job: DeliveryJob, attempt: number): void {
    line.active++;
    this.invoke(job).then(
      () => {
        line.active--;
        this.stats.delivered++;
        if (job.redriveOf) this.deadLetters.remove(job.redriveOf);
        this.settle(job);
      },
      (error: unknown) => {
        line.active--;
        this.stats.failedAttempts++;
        const message = error instanceof Error ? error.message : String(error);
        const expired = Date.now() - job.enqueuedAt >= job.maxAgeMs;
        if (attempt > job.maxRetries || expired || this.closed) {
          this.deadLetter(job, attempt, expired ? `event expired: ${message}` : message);
        } else {
          this.retryLater(job, attempt + 1);
        }
        this.pump();
      },
    );
  }

  private retryLater(job: DeliveryJob, attempt: number): void {
    const exponential = this.options.baseDelayMs * 2 ** (attempt - 2);
    const delay = Math.min(this.options.maxDelayMs, exponential) * (0.5 + Math.random() / 2);
    const timer = setTimeout(() => {
      this.retrying.delete(timer);
      const line = this.lineOf(job);
      line.waiting.push({ job, attempt });
      this.pumpLine(line);
    }, delay);
    timer.unref();
    this.retrying.set(timer, { job, attempt });
  }

  private deadLetter(
    job: DeliveryJob,
    attempts: number,
    error: string,
    options: { transient?: boolean } = {},
  ): void {
    this.stats.deadLettered++;
    // A redrive cut short by closing leaves its letter as it was, still kept.
    if (options.transient && job.redriveOf) {
      this.settle(job);
      return;
    }
    this.deadLetters.put(
      {
        id: job.redriveOf ?? randomUUID(),
        eventId: job.eventId,
        busName: job.busName,
        ruleName: job.ruleName,
        targetId: job.targetId,
        targetArn: job.targetArn,
        ...(job.deadLetterArn ? { deadLetterArn: job.deadLetterArn } : {}),
        attempts,
        error,
        input: job.input,
        failedAt: new Date().toISOString(),
      },
      options,
    );
    this.settle(job);
  }

  private settle(job: DeliveryJob): void {
    const left = (this.perEvent.get(job.eventId) ?? 1) - 1;
    if (left > 0) this.perEvent.set(job.eventId, left);
    else {
      this.perEvent.delete(job.eventId);
      // Closing dead-letters what is left: that is not an event's end, it must be replayed.
      if (!this.closed) this.onEventDone?.(job.eventId);
    }
    this.outstanding--;
    if (this.outstanding === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
    this.pump();
  }
}
