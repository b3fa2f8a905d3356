import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { type DeadLetter, DeadLetterStore } from "./dead-letters";
import { type DeliveryJob, type DeliveryOptions, DeliveryQueue } from "./delivery";
import { buildEnvelope, checkEntry, type EventEnvelope } from "./envelope";
import { EventBridgeApiError, validation } from "./errors";
import { targetInput } from "./input";
import { BusJournal } from "./journal";
import {
  type Bus,
  BusRegistry,
  compileOrReject,
  paginate,
  type RegistrySnapshot,
  type Rule,
} from "./registry";
import {
  listDeadLettersInput,
  type PutEventsEntry,
  parseInput,
  putEventsInput,
  redriveDeadLettersInput,
  testEventPatternInput,
} from "./schemas";

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
  /**
   * Retries for targets without a RetryPolicy: EventBridge's default, 185 over at most a day
   * (MaximumEventAgeInSeconds 86400). Tests give fewer.
   */
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
  /** A file that keeps buses, rules and targets across restarts. None: memory only. */
  rulesFile?: string;
  /** A file that keeps dead letters until they are redriven. None: memory only. */
  deadLettersFile?: string;
}

/** EventBridge's retry defaults: 185 retries, events up to a day old. */
const DEFAULT_MAX_RETRIES = 185;
const DEFAULT_MAX_EVENT_AGE_SECONDS = 86_400;

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
    this.defaultMaxRetries = options.defaultMaxRetries ?? DEFAULT_MAX_RETRIES;
    this.httpTargetTimeoutMs = options.httpTargetTimeoutMs ?? 10_000;
    this.refuseEntry = options.refuseEntry;
    this.queue = new DeliveryQueue(
      (job) => this.invoke(job),
      {
        baseDelayMs: 1_000,
        maxDelayMs: 180_000,
        maxConcurrency: 64,
        duplicateDeliveries: 0,
        ...options.delivery,
      },
      new DeadLetterStore(options.deadLettersFile),
    );
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
    const rulesFile = options.rulesFile;
    if (rulesFile) {
      if (existsSync(rulesFile)) {
        this.registry.restore(JSON.parse(readFileSync(rulesFile, "utf8")) as RegistrySnapshot);
      }
      this.registry.setOnChange(() => {
        writeFileSync(`${rulesFile}.tmp`, JSON.stringify(this.registry.snapshot()));
        renameSync(`${rulesFile}.tmp`, rulesFile);
      });
    }
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
    return this.queue.deadLetters.list();
  }

  /**
   * Removes the rules a restart restored whose every target is a function of this process
   * that nobody registered again (a tool that no longer exists): they would only fill the
   * dead letters. Returns their names.
   */
  dropRulesWithoutHandlers(): string[] {
    const dropped: string[] = [];
    for (const rule of this.registry.rules()) {
      const targets = [...rule.targets.values()];
      const orphaned = targets.every((target) => {
        const name = LAMBDA_ARN.exec(target.Arn)?.[1];
        return name !== undefined && !this.functions.has(name);
      });
      if (targets.length === 0 || !orphaned) continue;
      const ref = { Rule: rule.name, EventBusName: rule.busName };
      this.registry.removeTargets({ ...ref, Ids: targets.map((target) => target.Id) });
      this.registry.deleteRule({ Name: rule.name, EventBusName: rule.busName });
      dropped.push(rule.name);
    }
    return dropped;
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

  /**
   * Operations of the local bus only (X-Amz-Target `ToolbusLocal.<Op>`): EventBridge keeps
   * dead letters in each target's SQS queue, which one machine does not have.
   */
  async dispatchLocal(operation: string, input: unknown): Promise<unknown> {
    switch (operation) {
      case "ListDeadLetters":
        return this.listDeadLetters(input);
      case "RedriveDeadLetters":
        return this.redriveDeadLetters(input);
      default:
        throw new EventBridgeApiError(
          "UnknownOperationException",
          `Operation ToolbusLocal.${operation} does not exist: ListDeadLetters, RedriveDeadLetters.`,
        );
    }
  }

  private listDeadLetters(raw: unknown) {
    const input = parseInput(listDeadLettersInput, raw);
    const page = paginate(this.matchingDeadLetters(input), input.NextToken, input.Limit);
    return {
      DeadLetters: page.items.map(deadLetterView),
      ...(page.nextToken ? { NextToken: page.nextToken } : {}),
    };
  }

  /**
   * Delivers dead letters again, to their rule's target as it is now (fixed, perhaps), with
   * its retry policy. A letter stays listed until its new delivery succeeds, so a crash in
   * between loses nothing; one whose rule or target is gone stays, and is reported.
   */
  private redriveDeadLetters(raw: unknown) {
    const input = parseInput(redriveDeadLettersInput, raw);
    const letters = input.Ids
      ? input.Ids.map((id) => this.queue.deadLetters.get(id) ?? id)
      : this.matchingDeadLetters(input);
    const Failed: Array<{ Id: string; Message: string }> = [];
    let RedrivenCount = 0;
    for (const letter of letters) {
      if (typeof letter === "string") {
        Failed.push({ Id: letter, Message: "No dead letter has this id." });
        continue;
      }
      const target = this.registry
        .find(letter.busName)
        ?.rules.get(letter.ruleName)
        ?.targets.get(letter.targetId);
      if (!target) {
        Failed.push({ Id: letter.id, Message: "Its rule or target no longer exists." });
        continue;
      }
      this.queue.enqueue({
        eventId: letter.eventId,
        busName: letter.busName,
        ruleName: letter.ruleName,
        targetId: target.Id,
        targetArn: target.Arn,
        input: letter.input,
        maxRetries: target.RetryPolicy?.MaximumRetryAttempts ?? this.defaultMaxRetries,
        maxAgeMs:
          (target.RetryPolicy?.MaximumEventAgeInSeconds ?? DEFAULT_MAX_EVENT_AGE_SECONDS) * 1000,
        enqueuedAt: Date.now(),
        redriveOf: letter.id,
      });
      RedrivenCount++;
    }
    return { RedrivenCount, Failed };
  }

  private matchingDeadLetters(filter: { EventBusName?: string; RuleName?: string }) {
    return this.queue.deadLetters
      .list()
      .filter(
        (letter) =>
          (!filter.EventBusName || letter.busName === filter.EventBusName) &&
          (!filter.RuleName || letter.ruleName === filter.RuleName),
      );
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
    const rules = this.registry.matchingRules(bus, envelope);
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
        maxAgeMs: (retry?.MaximumEventAgeInSeconds ?? DEFAULT_MAX_EVENT_AGE_SECONDS) * 1000,
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

/** A dead letter as ListDeadLetters answers it, in the API's casing. */
function deadLetterView(letter: DeadLetter) {
  return {
    Id: letter.id,
    EventId: letter.eventId,
    EventBusName: letter.busName,
    RuleName: letter.ruleName,
    TargetId: letter.targetId,
    TargetArn: letter.targetArn,
    Attempts: letter.attempts,
    Error: letter.error,
    FailedAt: letter.failedAt,
    Input: letter.input,
  };
}
