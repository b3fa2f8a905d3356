import { randomUUID } from "node:crypto";
import { type CompiledPattern, compilePattern, InvalidEventPatternError } from "../pattern";
import { type DeadLetter, type DeliveryJob, type DeliveryOptions, DeliveryQueue } from "./delivery";
import { buildEnvelope, checkEntry, type EventEnvelope } from "./envelope";
import { alreadyExists, EventBridgeApiError, limitExceeded, notFound, validation } from "./errors";
import { targetInput } from "./input";
import { schedulePeriodMs } from "./schedule";
import {
  createBusInput,
  deleteBusInput,
  deleteRuleInput,
  describeBusInput,
  listBusesInput,
  listRulesInput,
  listTargetsInput,
  parseInput,
  putEventsInput,
  putRuleInput,
  putTargetsInput,
  removeTargetsInput,
  ruleRef,
  type Target,
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
  /** Retries for targets without a RetryPolicy. AWS retries 185 times over a day; locally a
   * few quick retries show the same behaviour without hiding a broken target for hours. */
  defaultMaxRetries?: number;
  limits?: { rulesPerBus?: number; targetsPerRule?: number };
  /** Timeout for HTTP targets (local extension: a target ARN may be an http(s) URL). */
  httpTargetTimeoutMs?: number;
}

interface Rule {
  name: string;
  arn: string;
  busName: string;
  eventPattern?: string;
  matcher?: CompiledPattern;
  scheduleExpression?: string;
  state: "ENABLED" | "DISABLED";
  description?: string;
  roleArn?: string;
  targets: Map<string, Target>;
  timer?: NodeJS.Timeout;
}

interface Bus {
  name: string;
  arn: string;
  description?: string;
  creationTime: Date;
  lastModifiedTime: Date;
  rules: Map<string, Rule>;
}

const DEFAULT_BUS = "default";
const LAMBDA_ARN = /^arn:aws[\w-]*:lambda:[^:]+:\d{12}:function:([^:]+)(?::[^:]+)?$/;

/**
 * An EventBridge-compatible bus that lives in this process. The protocol layers (HTTP server
 * and in-process SDK handler) only translate requests into `dispatch` calls, so both behave
 * identically and the unmodified AWS SDK sees the same answers as from AWS.
 */
export class LocalEventBus {
  readonly region: string;
  readonly account: string;
  private readonly buses = new Map<string, Bus>();
  private readonly functions = new Map<string, LocalFunction>();
  private readonly queue: DeliveryQueue;
  private readonly defaultMaxRetries: number;
  private readonly rulesPerBus: number;
  private readonly targetsPerRule: number;
  private readonly httpTargetTimeoutMs: number;

  constructor(options: LocalEventBusOptions = {}) {
    this.region = options.region ?? "us-east-1";
    this.account = options.account ?? "000000000000";
    this.defaultMaxRetries = options.defaultMaxRetries ?? 2;
    this.rulesPerBus = options.limits?.rulesPerBus ?? 300;
    this.targetsPerRule = options.limits?.targetsPerRule ?? 5;
    this.httpTargetTimeoutMs = options.httpTargetTimeoutMs ?? 10_000;
    this.queue = new DeliveryQueue((job) => this.invoke(job), {
      baseDelayMs: 200,
      maxDelayMs: 5_000,
      maxConcurrency: 64,
      duplicateDeliveries: 0,
      ...options.delivery,
    });
    this.addBus(DEFAULT_BUS);
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
    for (const bus of this.buses.values()) for (const rule of bus.rules.values()) stopTimer(rule);
    this.queue.close();
  }

  // ---- protocol entry point -----------------------------------------------------------------

  /** Runs one API operation by its EventBridge name, with the JSON input the SDK sent. */
  async dispatch(operation: string, input: unknown): Promise<unknown> {
    switch (operation) {
      case "PutEvents":
        return this.putEvents(input);
      case "PutRule":
        return this.putRule(input);
      case "DescribeRule":
        return this.describeRule(input);
      case "DeleteRule":
        return this.deleteRule(input);
      case "ListRules":
        return this.listRules(input);
      case "EnableRule":
        return this.setRuleState(input, "ENABLED");
      case "DisableRule":
        return this.setRuleState(input, "DISABLED");
      case "PutTargets":
        return this.putTargets(input);
      case "RemoveTargets":
        return this.removeTargets(input);
      case "ListTargetsByRule":
        return this.listTargetsByRule(input);
      case "CreateEventBus":
        return this.createEventBus(input);
      case "DescribeEventBus":
        return this.describeEventBus(input);
      case "ListEventBuses":
        return this.listEventBuses(input);
      case "DeleteEventBus":
        return this.deleteEventBus(input);
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
      const check = checkEntry(entry);
      if (!check.ok) {
        failed++;
        return { ErrorCode: check.code, ErrorMessage: check.message };
      }
      const bus = this.buses.get(busNameOf(entry.EventBusName));
      if (!bus) {
        failed++;
        const name = busNameOf(entry.EventBusName);
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
    for (const rule of bus.rules.values()) {
      if (rule.state === "ENABLED" && rule.matcher?.matches(envelope)) this.fanOut(rule, envelope);
    }
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

  // ---- rules --------------------------------------------------------------------------------

  putRule(raw: unknown) {
    const input = parseInput(putRuleInput, raw);
    const bus = this.requireBus(input.EventBusName);
    if (!input.EventPattern && !input.ScheduleExpression) {
      throw validation("Parameter(s) EventPattern or ScheduleExpression must be specified.");
    }
    const matcher = input.EventPattern ? compileOrReject(input.EventPattern) : undefined;
    const periodMs = input.ScheduleExpression
      ? schedulePeriodMs(input.ScheduleExpression)
      : undefined;
    const existing = bus.rules.get(input.Name);
    if (!existing && bus.rules.size >= this.rulesPerBus) {
      throw limitExceeded(`The requested resource exceeds the maximum number allowed.`);
    }
    const rule: Rule = {
      name: input.Name,
      arn: this.ruleArn(bus.name, input.Name),
      busName: bus.name,
      state: input.State ?? "ENABLED",
      targets: existing?.targets ?? new Map(),
      ...(input.EventPattern ? { eventPattern: input.EventPattern, matcher } : {}),
      ...(input.ScheduleExpression ? { scheduleExpression: input.ScheduleExpression } : {}),
      ...(input.Description !== undefined ? { description: input.Description } : {}),
      ...(input.RoleArn ? { roleArn: input.RoleArn } : {}),
    };
    if (existing) stopTimer(existing);
    bus.rules.set(rule.name, rule);
    if (periodMs !== undefined) this.schedule(rule, periodMs);
    return { RuleArn: rule.arn };
  }

  describeRule(raw: unknown) {
    const rule = this.requireRule(parseInput(ruleRef, raw));
    return {
      Name: rule.name,
      Arn: rule.arn,
      EventBusName: rule.busName,
      State: rule.state,
      CreatedBy: this.account,
      ...(rule.eventPattern ? { EventPattern: rule.eventPattern } : {}),
      ...(rule.scheduleExpression ? { ScheduleExpression: rule.scheduleExpression } : {}),
      ...(rule.description !== undefined ? { Description: rule.description } : {}),
      ...(rule.roleArn ? { RoleArn: rule.roleArn } : {}),
    };
  }

  deleteRule(raw: unknown) {
    const input = parseInput(deleteRuleInput, raw);
    const bus = this.requireBus(input.EventBusName);
    const rule = bus.rules.get(input.Name);
    if (!rule) return {};
    if (rule.targets.size > 0) throw validation("Rule can't be deleted since it has targets.");
    stopTimer(rule);
    bus.rules.delete(rule.name);
    return {};
  }

  listRules(raw: unknown) {
    const input = parseInput(listRulesInput, raw);
    const bus = this.requireBus(input.EventBusName);
    const rules = [...bus.rules.values()]
      .filter((rule) => !input.NamePrefix || rule.name.startsWith(input.NamePrefix))
      .sort((a, b) => a.name.localeCompare(b.name));
    const page = paginate(rules, input.NextToken, input.Limit);
    return {
      Rules: page.items.map((rule) => {
        const { Name, Arn, EventBusName, State, EventPattern, ScheduleExpression, Description } =
          this.describeRule({ Name: rule.name, EventBusName: bus.name });
        return { Name, Arn, EventBusName, State, EventPattern, ScheduleExpression, Description };
      }),
      ...(page.nextToken ? { NextToken: page.nextToken } : {}),
    };
  }

  setRuleState(raw: unknown, state: Rule["state"]) {
    const rule = this.requireRule(parseInput(ruleRef, raw));
    rule.state = state;
    return {};
  }

  // ---- targets ------------------------------------------------------------------------------

  putTargets(raw: unknown) {
    const input = parseInput(putTargetsInput, raw);
    const rule = this.requireRule({ Name: input.Rule, EventBusName: input.EventBusName });
    const added = input.Targets.filter((target) => !rule.targets.has(target.Id)).length;
    if (rule.targets.size + added > this.targetsPerRule) {
      throw limitExceeded(
        `The requested resource exceeds the maximum number allowed: ${this.targetsPerRule} targets per rule.`,
      );
    }
    const FailedEntries: Array<{ TargetId: string; ErrorCode: string; ErrorMessage: string }> = [];
    for (const target of input.Targets) {
      const problem = targetProblem(target);
      if (problem) {
        FailedEntries.push({
          TargetId: target.Id,
          ErrorCode: "ValidationException",
          ErrorMessage: problem,
        });
      } else {
        rule.targets.set(target.Id, target);
      }
    }
    return { FailedEntryCount: FailedEntries.length, FailedEntries };
  }

  removeTargets(raw: unknown) {
    const input = parseInput(removeTargetsInput, raw);
    const rule = this.requireRule({ Name: input.Rule, EventBusName: input.EventBusName });
    for (const id of input.Ids) rule.targets.delete(id);
    return { FailedEntryCount: 0, FailedEntries: [] };
  }

  listTargetsByRule(raw: unknown) {
    const input = parseInput(listTargetsInput, raw);
    const rule = this.requireRule({ Name: input.Rule, EventBusName: input.EventBusName });
    const page = paginate([...rule.targets.values()], input.NextToken, input.Limit);
    return { Targets: page.items, ...(page.nextToken ? { NextToken: page.nextToken } : {}) };
  }

  // ---- buses --------------------------------------------------------------------------------

  createEventBus(raw: unknown) {
    const input = parseInput(createBusInput, raw);
    if (input.Name === DEFAULT_BUS || input.Name.startsWith("aws.")) {
      throw validation(`Event bus name ${input.Name} is reserved.`);
    }
    if (this.buses.has(input.Name)) throw alreadyExists(`Event bus ${input.Name} already exists.`);
    const bus = this.addBus(input.Name, input.Description);
    return { EventBusArn: bus.arn, ...(bus.description ? { Description: bus.description } : {}) };
  }

  describeEventBus(raw: unknown) {
    const bus = this.requireBus(parseInput(describeBusInput, raw).Name);
    return busView(bus);
  }

  listEventBuses(raw: unknown) {
    const input = parseInput(listBusesInput, raw);
    const buses = [...this.buses.values()]
      .filter((bus) => !input.NamePrefix || bus.name.startsWith(input.NamePrefix))
      .sort((a, b) => a.name.localeCompare(b.name));
    const page = paginate(buses, input.NextToken, input.Limit);
    return {
      EventBuses: page.items.map(busView),
      ...(page.nextToken ? { NextToken: page.nextToken } : {}),
    };
  }

  deleteEventBus(raw: unknown) {
    const name = busNameOf(parseInput(deleteBusInput, raw).Name);
    if (name === DEFAULT_BUS) throw validation("Cannot delete event bus default.");
    const bus = this.buses.get(name);
    if (bus) for (const rule of bus.rules.values()) stopTimer(rule);
    this.buses.delete(name);
    return {};
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

  private addBus(name: string, description?: string): Bus {
    const now = new Date();
    const bus: Bus = {
      name,
      arn: `arn:aws:events:${this.region}:${this.account}:event-bus/${name}`,
      creationTime: now,
      lastModifiedTime: now,
      rules: new Map(),
      ...(description ? { description } : {}),
    };
    this.buses.set(name, bus);
    return bus;
  }

  private requireBus(nameOrArn: string | undefined): Bus {
    const name = busNameOf(nameOrArn);
    const bus = this.buses.get(name);
    if (!bus) throw notFound(`Event bus ${name} does not exist.`);
    return bus;
  }

  private requireRule(ref: { Name: string; EventBusName?: string | undefined }): Rule {
    const bus = this.requireBus(ref.EventBusName);
    const rule = bus.rules.get(ref.Name);
    if (!rule) throw notFound(`Rule ${ref.Name} does not exist on EventBus ${bus.name}.`);
    return rule;
  }

  private ruleArn(busName: string, ruleName: string): string {
    const path = busName === DEFAULT_BUS ? ruleName : `${busName}/${ruleName}`;
    return `arn:aws:events:${this.region}:${this.account}:rule/${path}`;
  }

  private schedule(rule: Rule, periodMs: number): void {
    rule.timer = setInterval(() => {
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
    rule.timer.unref();
  }
}

function busNameOf(nameOrArn: string | undefined): string {
  if (!nameOrArn) return DEFAULT_BUS;
  const marker = ":event-bus/";
  const at = nameOrArn.indexOf(marker);
  return at === -1 ? nameOrArn : nameOrArn.slice(at + marker.length);
}

function busView(bus: Bus) {
  return {
    Name: bus.name,
    Arn: bus.arn,
    ...(bus.description ? { Description: bus.description } : {}),
    CreationTime: bus.creationTime.getTime() / 1000,
    LastModifiedTime: bus.lastModifiedTime.getTime() / 1000,
  };
}

function compileOrReject(pattern: string): CompiledPattern {
  try {
    return compilePattern(pattern);
  } catch (error) {
    if (error instanceof InvalidEventPatternError) {
      throw new EventBridgeApiError("InvalidEventPatternException", error.message);
    }
    throw error;
  }
}

function targetProblem(target: Target): string | undefined {
  const transforms = [target.Input, target.InputPath, target.InputTransformer].filter(
    (value) => value !== undefined,
  );
  if (transforms.length > 1) {
    return "Only one of Input, InputPath, or InputTransformer may be set for a target.";
  }
  if (target.Input !== undefined) {
    try {
      JSON.parse(target.Input);
    } catch {
      return "Input is not valid JSON.";
    }
  }
  if (target.InputPath !== undefined && !target.InputPath.startsWith("$")) {
    return "InputPath is not a valid JSONPath.";
  }
  return undefined;
}

/** Opaque tokens are offsets; callers must not read meaning into them, as on AWS. */
function paginate<T>(items: T[], token: string | undefined, limit = 100) {
  const start = token ? Number.parseInt(Buffer.from(token, "base64url").toString(), 10) : 0;
  if (!Number.isInteger(start) || start < 0) throw validation("The NextToken is not valid.");
  const end = start + limit;
  const nextToken = end < items.length ? Buffer.from(String(end)).toString("base64url") : undefined;
  return { items: items.slice(start, end), nextToken };
}

function stopTimer(rule: Rule): void {
  if (rule.timer) clearInterval(rule.timer);
  delete rule.timer;
}
