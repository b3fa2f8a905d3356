import { randomUUID } from "node:crypto";
import { type DeadLetter, type DeliveryJob, type DeliveryOptions, DeliveryQueue } from "./delivery";
import { buildEnvelope, checkEntry, type EventEnvelope } from "./envelope";
import { EventBridgeApiError, validation } from "./errors";
import { targetInput } from "./input";
import { BusJournal } from "./journal";
import { type Bus, BusRegistry, compileOrReject, type Rule } from "./registry";
import { type PutEventsEntry, parseInput, putEventsInput, testEventPatternInput } from "./schemas";

/** A function the bus can invoke, registered under a Lambda-style ARN. */
export type LocalFunction = (event: unknown, context: InvocationContext) => unknown;

export interface InvocationContext {
  functionName: string;
  invokedFunctionArn: string;
  awsRequestId: string;
}

export interface LocalEventBusOptions {
  region?: string;
  account?: string;
  delivery?: Partial<DeliveryOptions>;
  /** Retries for targets without a RetryPolicy. AWS retries 185 times over a day; locally a
   * few quick retries show the same behaviour without hiding a broken target for hours. */
  defaultMaxRetries?: number;
  limits?: { rulesPerBus?: number; targetsPerRule?: number };
  /** Timeout for HTTP targets (local extension: a target ARN may be an http(s) URL). */
  httpTargetTimeoutMs?: number;
  /**
   * Fault injection: refuse an entry the way EventBridge sometimes does (ThrottlingException,
   * InternalFailure) inside a 200 reply, to prove publishers resend only what failed.
   */
  refuseEntry?: (entry: PutEventsEntry) => { code: string; message: string } | undefined;
  /**
   * A file that keeps accepted events until every delivery of theirs ended, so a process
   * killed outright delivers them after its restart (`replayJournal`). None: memory only.
   */
  journalFile?: string;
}

const LAMBDA_ARN = /^arn:aws[\w-]*:lambda:[^:]+:\d{12}:function:([^:]+)(?::[^:]+)?$/;

/**
 * An EventBridge-compatible bus that lives in this process. The protocol layers (HTTP server
 * and in-process SDK handler) only translate requests into `dispatch` calls, so both behave
 * identically and the unmodified AWS SDK sees the same answers as from AWS.
 */
export class LocalEventBus {
  readonly region: string;
  readonly account: string;
  private readonly registry: BusRegistry;
  private readonly functions = new Map<string, LocalFunction>();
  private readonly queue: DeliveryQueue;
  private readonly defaultMaxRetries: number;
  private readonly httpTargetTimeoutMs: number;
  private readonly refuseEntry: LocalEventBusOptions["refuseEntry"];
  private readonly journal: BusJournal | undefined;

  constructor(options: LocalEventBusOptions = {}) {
    this.region = options.region ?? "us-east-1";
    this.account = options.account ?? "000000000000";
    this.defaultMaxRetries = options.defaultMaxRetries ?? 2;
    this.httpTargetTimeoutMs = options.httpTargetTimeoutMs ?? 10_000;
    this.refuseEntry = options.refuseEntry;
    this.queue = new DeliveryQueue((job) => this.invoke(job), {
      baseDelayMs: 200,
      maxDelayMs: 5_000,
      maxConcurrency: 64,
      duplicateDeliveries: 0,
      ...options.delivery,
    });
    this.journal = options.journalFile ? new BusJournal(options.journalFile) : undefined;
    const journal = this.journal;
    if (journal) this.queue.onEventDone = (eventId) => journal.finished(eventId);
    this.registry = new BusRegistry({
      region: this.region,
      account: this.account,
      rulesPerBus: options.limits?.rulesPerBus ?? 300,
      targetsPerRule: options.limits?.targetsPerRule ?? 5,
      schedule: (rule, periodMs) => this.schedule(rule, periodMs),
    });
  }

  // ---- functions and inspection -------------------------------------------------------------

  /** Registers an in-process target and returns the ARN to use in PutTargets. */
  registerFunction(name: string, fn: LocalFunction): string {
    this.functions.set(name, fn);
    return this.functionArn(name);
  }

  unregisterFunction(name: string): void {
    this.functions.delete(name);
  }

  functionArn(name: string): string {
    return `arn:aws:lambda:${this.region}:${this.account}:function:${name}`;
  }

  /** Events no target accepted after its retries: inspect them instead of losing them. */
  deadLetters(): readonly DeadLetter[] {
    return this.queue.deadLetters;
  }

  deliveryStats() {
    return { ...this.queue.stats };
  }

  /** Resolves when every delivery accepted so far has finished or been dead-lettered. */
  drain(): Promise<void> {
    return this.queue.drain();
  }

  close(): void {
    this.registry.stopTimers();
    this.queue.close();
  }

  // ---- protocol entry point -----------------------------------------------------------------

  /** Runs one API operation by its EventBridge name, with the JSON input the SDK sent. */
  async dispatch(operation: string, input: unknown): Promise<unknown> {
    switch (operation) {
      case "PutEvents":
        return this.putEvents(input);
      case "PutRule":
        return this.registry.putRule(input);
      case "DescribeRule":
        return this.registry.describeRule(input);
      case "DeleteRule":
        return this.registry.deleteRule(input);
      case "ListRules":
        return this.registry.listRules(input);
      case "EnableRule":
        return this.registry.setRuleState(input, "ENABLED");
      case "DisableRule":
        return this.registry.setRuleState(input, "DISABLED");
      case "PutTargets":
        return this.registry.putTargets(input);
      case "RemoveTargets":
        return this.registry.removeTargets(input);
      case "ListTargetsByRule":
        return this.registry.listTargetsByRule(input);
      case "CreateEventBus":
        return this.registry.createEventBus(input);
      case "DescribeEventBus":
        return this.registry.describeEventBus(input);
      case "ListEventBuses":
        return this.registry.listEventBuses(input);
      case "DeleteEventBus":
        return this.registry.deleteEventBus(input);
      case "TestEventPattern":
        return this.testEventPattern(input);
      default:
        throw new EventBridgeApiError(
          "UnknownOperationException",
          `Operation ${operation} is not supported by the local event bus.`,
        );
    }
  }

  // ---- events ---------------------------------------------------------------------------------

  putEvents(raw: unknown) {
    const { Entries } = parseInput(putEventsInput, raw);
    let failed = 0;
    const results = Entries.map((entry) => {
      const refused = this.refuseEntry?.(entry);
      if (refused) {
        failed++;
        return { ErrorCode: refused.code, ErrorMessage: refused.message };
      }
      const check = checkEntry(entry);
      if (!check.ok) {
        failed++;
        return { ErrorCode: check.code, ErrorMessage: check.message };
      }
      const bus = this.registry.find(entry.EventBusName);
      if (!bus) {
        failed++;
        const name = entry.EventBusName ?? "default";
        return {
          ErrorCode: "ResourceNotFoundException",
          ErrorMessage: `Event bus ${name} does not exist.`,
        };
      }
      const envelope = buildEnvelope(entry, check.detail, this);
      this.route(bus, envelope);
      return { EventId: envelope.id };
    });
    return { FailedEntryCount: failed, Entries: results };
  }

  private route(bus: Bus, envelope: EventEnvelope): void {
    const rules = [...bus.rules.values()].filter(
      (rule) =>
        rule.state === "ENABLED" && rule.matcher?.matches(envelope) && rule.targets.size > 0,
    );
    // Kept before any target runs (and before PutEvents answers), so a kill cannot lose it.
    if (rules.length > 0) this.journal?.accepted({ busName: bus.name, envelope });
    for (const rule of rules) this.fanOut(rule, envelope);
  }

  /**
   * Delivers again what a previous process accepted and never finished delivering, to the
   * rules as they are now: call it once the rules and targets are in place.
   */
  replayJournal(): number {
    const unfinished = this.journal?.takeUnfinished() ?? [];
    let replayed = 0;
    for (const { busName, envelope } of unfinished) {
      const bus = this.registry.find(busName);
      if (!bus) continue;
      this.route(bus, envelope);
      replayed++;
    }
    return replayed;
  }

  private fanOut(rule: Rule, envelope: EventEnvelope): void {
    for (const target of rule.targets.values()) {
      const retry = target.RetryPolicy;
      this.queue.enqueue({
        eventId: envelope.id,
        busName: rule.busName,
        ruleName: rule.name,
        targetId: target.Id,
        targetArn: target.Arn,
        input: targetInput(target, envelope, rule.name),
        maxRetries: retry?.MaximumRetryAttempts ?? this.defaultMaxRetries,
        maxAgeMs: (retry?.MaximumEventAgeInSeconds ?? 86_400) * 1000,
        ...(target.DeadLetterConfig?.Arn ? { deadLetterArn: target.DeadLetterConfig.Arn } : {}),
        enqueuedAt: Date.now(),
      });
    }
  }

  private async invoke(job: DeliveryJob): Promise<void> {
    const lambda = LAMBDA_ARN.exec(job.targetArn);
    if (lambda?.[1]) {
      const name = lambda[1];
      const fn = this.functions.get(name);
      if (!fn) throw new Error(`Function not found: ${job.targetArn}`);
      await fn(job.input, {
        functionName: name,
        invokedFunctionArn: job.targetArn,
        awsRequestId: randomUUID(),
      });
      return;
    }
    if (/^https?:\/\//.test(job.targetArn)) {
      const response = await fetch(job.targetArn, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(job.input),
        signal: AbortSignal.timeout(this.httpTargetTimeoutMs),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`HTTP target answered ${response.status}`);
      return;
    }
    throw new Error(`Target type not supported by the local bus: ${job.targetArn}`);
  }

  testEventPattern(raw: unknown) {
    const input = parseInput(testEventPatternInput, raw);
    const matcher = compileOrReject(input.EventPattern);
    let event: unknown;
    try {
      event = JSON.parse(input.Event);
    } catch {
      throw validation("Parameter Event is not valid: it is not JSON.");
    }
    const required = ["id", "account", "source", "time", "region", "detail-type"];
    const missing = required.filter(
      (field) => event === null || typeof event !== "object" || !(field in event),
    );
    if (missing.length > 0) {
      throw validation(`Parameter Event is not valid: missing ${missing.join(", ")}.`);
    }
    return { Result: matcher.matches(event) };
  }

  // ---- helpers ------------------------------------------------------------------------------

  private schedule(rule: Rule, periodMs: number): NodeJS.Timeout {
    const timer = setInterval(() => {
      if (rule.state !== "ENABLED") return;
      this.fanOut(rule, {
        version: "0",
        id: randomUUID(),
        "detail-type": "Scheduled Event",
        source: "aws.events",
        account: this.account,
        time: `${new Date().toISOString().slice(0, 19)}Z`,
        region: this.region,
        resources: [rule.arn],
        detail: {},
      });
    }, periodMs);
    timer.unref();
    return timer;
  }
}
