import {
  CreateEventBusCommand,
  type EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
  ResourceAlreadyExistsException,
} from "@aws-sdk/client-eventbridge";
import { type BusRule, fedByBus, type ScheduledJob } from "@toolbus/core";
import type { LocalEventBus, LocalFunction } from "../bus";

/** A handler id as the wiring table names it (`recorder`) made into a local function name. */
export const localFunctionName = (handler: string) => `toolbus-${handler.replaceAll("/", "-")}`;

/**
 * Registers the wiring table on the local bus through the EventBridge API, the same calls a
 * deployment makes, so the local rules are exactly the deployed ones: a rule fed by the run
 * logs gets none here either, its feed being the local runtime's only writer of the table,
 * which puts the stage stream's chunks with the entries they hold (log-sole-writer.ts). Every
 * rule needs its handler: a missing one is an error here rather than events silently
 * dead-lettered later.
 */
export async function applyWiring(options: {
  bus: LocalEventBus;
  client: EventBridgeClient;
  busName: string;
  rules: readonly BusRule[];
  handlers: Readonly<Record<string, LocalFunction>>;
}): Promise<void> {
  const { bus, client, busName, handlers } = options;
  const rules = options.rules.filter(fedByBus);
  const missing = rules.filter((rule) => !handlers[rule.handler]).map((rule) => rule.handler);
  if (missing.length > 0) throw new Error(`No local handler for: ${missing.join(", ")}`);
  try {
    await client.send(new CreateEventBusCommand({ Name: busName }));
  } catch (error) {
    if (!(error instanceof ResourceAlreadyExistsException)) throw error;
  }
  for (const rule of rules) {
    const fn = handlers[rule.handler] as LocalFunction;
    const arn = bus.registerFunction(localFunctionName(rule.handler), fn);
    await client.send(
      new PutRuleCommand({
        Name: rule.name,
        EventBusName: busName,
        EventPattern: JSON.stringify(rule.pattern),
        Description: rule.description,
      }),
    );
    await client.send(
      new PutTargetsCommand({
        Rule: rule.name,
        EventBusName: busName,
        Targets: [{ Id: "handler", Arn: arn }],
      }),
    );
  }
}

/**
 * Registers timed jobs as rate() rules on the local bus's default bus, where AWS keeps
 * scheduled rules too; the local bus fires them on their interval.
 */
export async function applySchedules(options: {
  bus: LocalEventBus;
  client: EventBridgeClient;
  jobs: readonly ScheduledJob[];
  handlers: Readonly<Record<string, LocalFunction>>;
}): Promise<void> {
  const { bus, client, jobs, handlers } = options;
  for (const job of jobs) {
    const fn = handlers[job.handler];
    if (!fn) throw new Error(`No local handler for: ${job.handler}`);
    const arn = bus.registerFunction(localFunctionName(job.handler), fn);
    await client.send(
      new PutRuleCommand({
        Name: `toolbus-${job.name}`,
        ScheduleExpression: job.schedule,
        Description: job.description,
      }),
    );
    await client.send(
      new PutTargetsCommand({
        Rule: `toolbus-${job.name}`,
        Targets: [{ Id: "handler", Arn: arn }],
      }),
    );
  }
}
