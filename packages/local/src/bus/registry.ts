import {
  type CompiledPattern,
  compilePattern,
  createPatternIndex,
  InvalidEventPatternError,
  type PatternIndex,
} from "@toolbus/pattern";
import { alreadyExists, EventBridgeApiError, limitExceeded, notFound, validation } from "./errors";
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
  putRuleInput,
  putTargetsInput,
  removeTargetsInput,
  ruleRef,
  type Target,
} from "./schemas";

export interface Rule {
  name: string;
  arn: string;
  busName: string;
  eventPattern?: string;
  scheduleExpression?: string;
  state: "ENABLED" | "DISABLED";
  description?: string;
  roleArn?: string;
  targets: Map<string, Target>;
  timer?: NodeJS.Timeout;
  /** When the rule's name first came to its bus: it keeps the bus's order of rules. */
  order: number;
}

export interface Bus {
  name: string;
  arn: string;
  description?: string;
  creationTime: Date;
  lastModifiedTime: Date;
  rules: Map<string, Rule>;
  /** The event patterns of the bus's rules, by rule name: which rules an event matches. */
  patterns: PatternIndex<string>;
}

export interface RegistryOptions {
  region: string;
  account: string;
  rulesPerBus: number;
  targetsPerRule: number;
  /** Starts a `rate(...)` rule's timer; the registry stops it when the rule goes away. */
  schedule(rule: Rule, periodMs: number): NodeJS.Timeout;
  /** Called after every change to buses, rules or targets (to keep them in a file). */
  onChange?: () => void;
}

/** Buses, rules and targets as plain data: what a restart restores. */
export interface RegistrySnapshot {
  buses: Array<{
    Name: string;
    Description?: string;
    Rules: Array<{
      Name: string;
      EventPattern?: string;
      ScheduleExpression?: string;
      State: Rule["state"];
      Description?: string;
      RoleArn?: string;
      Targets: Target[];
    }>;
  }>;
}

const DEFAULT_BUS = "default";

/**
 * Buses, rules and targets, with EventBridge's validation, limits and answers. It only keeps
 * state; routing events through it is the bus service's job.
 */
export class BusRegistry {
  private readonly buses = new Map<string, Bus>();
  private nextRuleOrder = 0;

  constructor(private readonly options: RegistryOptions) {
    this.addBus(DEFAULT_BUS);
  }

  /** The bus an event or request names, or undefined: absent means the default bus. */
  find(nameOrArn: string | undefined): Bus | undefined {
    return this.buses.get(busNameOf(nameOrArn));
  }

  /** Called after every change from now on (restoring a snapshot is not one). */
  setOnChange(onChange: () => void): void {
    this.options.onChange = onChange;
  }

  private changed(): void {
    this.options.onChange?.();
  }

  /** Everything the registry holds, for `restore` in another process. */
  snapshot(): RegistrySnapshot {
    return {
      buses: [...this.buses.values()].map((bus) => ({
        Name: bus.name,
        ...(bus.description !== undefined ? { Description: bus.description } : {}),
        Rules: [...bus.rules.values()].map((rule) => ({
          Name: rule.name,
          State: rule.state,
          ...(rule.eventPattern ? { EventPattern: rule.eventPattern } : {}),
          ...(rule.scheduleExpression ? { ScheduleExpression: rule.scheduleExpression } : {}),
          ...(rule.description !== undefined ? { Description: rule.description } : {}),
          ...(rule.roleArn ? { RoleArn: rule.roleArn } : {}),
          Targets: [...rule.targets.values()],
        })),
      })),
    };
  }

  /**
   * Puts back what `snapshot` took, through the same validation as the API: a file edited by
   * hand into something EventBridge would refuse is refused here too.
   */
  restore(snapshot: RegistrySnapshot): void {
    const onChange = this.options.onChange;
    this.options.onChange = undefined;
    try {
      for (const bus of snapshot.buses) {
        if (!this.buses.has(busNameOf(bus.Name))) {
          this.createEventBus({ Name: bus.Name, Description: bus.Description });
        }
        for (const { Targets, ...rule } of bus.Rules) {
          this.putRule({ ...rule, EventBusName: bus.Name });
          if (Targets.length > 0) {
            this.putTargets({ Rule: rule.Name, EventBusName: bus.Name, Targets });
          }
        }
      }
    } finally {
      this.options.onChange = onChange;
    }
  }

  /**
   * The enabled rules with targets whose pattern matches the event, in the bus's order of
   * rules. The bus's pattern index finds them at a cost that depends on the event, not on how
   * many rules the bus has; disabled rules and rules without targets are dropped after.
   */
  matchingRules(bus: Bus, event: unknown): Rule[] {
    const rules: Rule[] = [];
    for (const name of bus.patterns.match(event)) {
      const rule = bus.rules.get(name);
      if (rule !== undefined && rule.state === "ENABLED" && rule.targets.size > 0) rules.push(rule);
    }
    // The index orders by when a pattern came; a rule that gained its pattern in an update
    // keeps its older place among the bus's rules.
    if (rules.length > 1) rules.sort((a, b) => a.order - b.order);
    return rules;
  }

  /** Every rule, with the bus it is on: for pruning what a restart restored but nobody serves. */
  rules(): Rule[] {
    return [...this.buses.values()].flatMap((bus) => [...bus.rules.values()]);
  }

  stopTimers(): void {
    for (const bus of this.buses.values()) for (const rule of bus.rules.values()) stopTimer(rule);
  }

  // ---- rules --------------------------------------------------------------------------------

  putRule(raw: unknown) {
    const input = parseInput(putRuleInput, raw);
    const bus = this.requireBus(input.EventBusName);
    if (!input.EventPattern && !input.ScheduleExpression) {
      throw validation("Parameter(s) EventPattern or ScheduleExpression must be specified.");
    }
    // Validated before the limit is checked, so a bad pattern is reported as such, as on AWS.
    if (input.EventPattern) compileOrReject(input.EventPattern);
    const periodMs = input.ScheduleExpression
      ? schedulePeriodMs(input.ScheduleExpression)
      : undefined;
    const existing = bus.rules.get(input.Name);
    if (!existing && bus.rules.size >= this.options.rulesPerBus) {
      throw limitExceeded(`The requested resource exceeds the maximum number allowed.`);
    }
    const rule: Rule = {
      name: input.Name,
      arn: this.ruleArn(bus.name, input.Name),
      busName: bus.name,
      state: input.State ?? "ENABLED",
      targets: existing?.targets ?? new Map(),
      order: existing?.order ?? this.nextRuleOrder++,
      ...(input.EventPattern ? { eventPattern: input.EventPattern } : {}),
      ...(input.ScheduleExpression ? { scheduleExpression: input.ScheduleExpression } : {}),
      ...(input.Description !== undefined ? { description: input.Description } : {}),
      ...(input.RoleArn ? { roleArn: input.RoleArn } : {}),
    };
    if (existing) stopTimer(existing);
    if (input.EventPattern) bus.patterns.add(rule.name, input.EventPattern);
    else bus.patterns.remove(rule.name);
    bus.rules.set(rule.name, rule);
    if (periodMs !== undefined) rule.timer = this.options.schedule(rule, periodMs);
    this.changed();
    return { RuleArn: rule.arn };
  }

  describeRule(raw: unknown) {
    const rule = this.requireRule(parseInput(ruleRef, raw));
    return {
      Name: rule.name,
      Arn: rule.arn,
      EventBusName: rule.busName,
      State: rule.state,
      CreatedBy: this.options.account,
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
    bus.patterns.remove(rule.name);
    bus.rules.delete(rule.name);
    this.changed();
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
    this.changed();
    return {};
  }

  // ---- targets ------------------------------------------------------------------------------

  putTargets(raw: unknown) {
    const input = parseInput(putTargetsInput, raw);
    const rule = this.requireRule({ Name: input.Rule, EventBusName: input.EventBusName });
    const added = input.Targets.filter((target) => !rule.targets.has(target.Id)).length;
    if (rule.targets.size + added > this.options.targetsPerRule) {
      throw limitExceeded(
        `The requested resource exceeds the maximum number allowed: ${this.options.targetsPerRule} targets per rule.`,
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
    this.changed();
    return { FailedEntryCount: FailedEntries.length, FailedEntries };
  }

  removeTargets(raw: unknown) {
    const input = parseInput(removeTargetsInput, raw);
    const rule = this.requireRule({ Name: input.Rule, EventBusName: input.EventBusName });
    for (const id of input.Ids) rule.targets.delete(id);
    this.changed();
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
    this.changed();
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
    this.changed();
    return {};
  }

  // ---- helpers ----------------------------------------------------------------------------

  private addBus(name: string, description?: string): Bus {
    const now = new Date();
    const bus: Bus = {
      name,
      arn: `arn:aws:events:${this.options.region}:${this.options.account}:event-bus/${name}`,
      creationTime: now,
      lastModifiedTime: now,
      rules: new Map(),
      patterns: createPatternIndex(),
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
    return `arn:aws:events:${this.options.region}:${this.options.account}:rule/${path}`;
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

export function compileOrReject(pattern: string): CompiledPattern {
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
/** A page of `items` for EventBridge-style `Limit` / `NextToken`. */
export function paginate<T>(items: T[], token: string | undefined, limit = 100) {
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
