import { z } from "zod";
import { validation } from "./errors";

// Request shapes of the operations we serve, with the constraints EventBridge documents.
// Unknown members are ignored, as the real service does, so newer SDKs keep working.

const ruleName = z
  .string()
  .min(1)
  .max(64)
  .regex(
    /^[.\-_A-Za-z0-9]+$/,
    "Member must satisfy regular expression pattern: [\\.\\-_A-Za-z0-9]+",
  );
const busName = z
  .string()
  .min(1)
  .max(1600)
  .regex(
    /^(arn:aws[\w-]*:events:[a-z0-9-]+:\d{12}:event-bus\/)?[/.\-_A-Za-z0-9]+$/,
    "Member must be an event bus name or ARN",
  );
const limit = z.number().int().min(1).max(100).optional();
const nextToken = z.string().min(1).max(2048).optional();

const putEventsEntry = z.object({
  Source: z.string().optional(),
  DetailType: z.string().optional(),
  Detail: z.string().optional(),
  Resources: z.array(z.string()).optional(),
  // The SDK sends Time as epoch seconds; raw HTTP callers sometimes send ISO strings.
  Time: z.union([z.number(), z.string()]).optional(),
  EventBusName: busName.optional(),
  TraceHeader: z.string().optional(),
});
export type PutEventsEntry = z.infer<typeof putEventsEntry>;

export const putEventsInput = z.object({
  Entries: z
    .array(putEventsEntry)
    .min(1)
    .max(10, "Member must have length less than or equal to 10"),
  EndpointId: z.string().optional(),
});

const retryPolicy = z.object({
  MaximumRetryAttempts: z.number().int().min(0).max(185).optional(),
  MaximumEventAgeInSeconds: z.number().int().min(60).max(86400).optional(),
});

const target = z.object({
  Id: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[.\-_A-Za-z0-9]+$/),
  Arn: z.string().min(1).max(1600),
  RoleArn: z.string().optional(),
  Input: z.string().max(8192).optional(),
  InputPath: z.string().max(256).optional(),
  InputTransformer: z
    .object({
      InputPathsMap: z.record(z.string(), z.string()).optional(),
      InputTemplate: z.string().max(8192),
    })
    .optional(),
  RetryPolicy: retryPolicy.optional(),
  DeadLetterConfig: z.object({ Arn: z.string().optional() }).optional(),
});
export type Target = z.infer<typeof target>;

export const putRuleInput = z.object({
  Name: ruleName,
  EventBusName: busName.optional(),
  EventPattern: z.string().max(4096).optional(),
  ScheduleExpression: z.string().max(256).optional(),
  State: z.enum(["ENABLED", "DISABLED"]).optional(),
  Description: z.string().max(512).optional(),
  RoleArn: z.string().optional(),
});

export const ruleRef = z.object({ Name: ruleName, EventBusName: busName.optional() });
export const deleteRuleInput = ruleRef.extend({ Force: z.boolean().optional() });
export const listRulesInput = z.object({
  NamePrefix: z.string().max(64).optional(),
  EventBusName: busName.optional(),
  NextToken: nextToken,
  Limit: limit,
});

export const putTargetsInput = z.object({
  Rule: ruleName,
  EventBusName: busName.optional(),
  Targets: z.array(target).min(1).max(10, "Member must have length less than or equal to 10"),
});
export const removeTargetsInput = z.object({
  Rule: ruleName,
  EventBusName: busName.optional(),
  Ids: z.array(z.string().min(1).max(64)).min(1).max(100),
  Force: z.boolean().optional(),
});
export const listTargetsInput = z.object({
  Rule: ruleName,
  EventBusName: busName.optional(),
  NextToken: nextToken,
  Limit: limit,
});

export const createBusInput = z.object({
  Name: z
    .string()
    .min(1)
    .max(256)
    .regex(/^[/.\-_A-Za-z0-9]+$/),
  Description: z.string().max(512).optional(),
  EventSourceName: z.string().optional(),
  KmsKeyIdentifier: z.string().optional(),
  DeadLetterConfig: z.object({ Arn: z.string().optional() }).optional(),
});
export const describeBusInput = z.object({ Name: busName.optional() });
export const deleteBusInput = z.object({ Name: busName });
export const listBusesInput = z.object({
  NamePrefix: z.string().optional(),
  NextToken: nextToken,
  Limit: limit,
});

export const testEventPatternInput = z.object({ EventPattern: z.string(), Event: z.string() });

/** Parses an operation's input, failing the way EventBridge does: a ValidationException. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input ?? {});
  if (result.success) return result.data;
  const issues = result.error.issues;
  const details = issues
    .map((issue) => {
      const at = issue.path.map(String).join(".") || "input";
      return `Value at '${at}' failed to satisfy constraint: ${issue.message}`;
    })
    .join("; ");
  const count = `${issues.length} validation error${issues.length === 1 ? "" : "s"} detected`;
  throw validation(`${count}: ${details}`);
}

// Local-only operations (X-Amz-Target `ToolbusLocal.<Op>`): dead letters.
const deadLetterFilter = {
  EventBusName: busName.optional(),
  RuleName: ruleName.optional(),
};
export const listDeadLettersInput = z.object({
  ...deadLetterFilter,
  NextToken: nextToken,
  Limit: limit,
});
export const redriveDeadLettersInput = z.object({
  ...deadLetterFilter,
  /** Which dead letters; absent: every one the filter matches. */
  Ids: z.array(z.string().min(1).max(64)).min(1).max(100).optional(),
});
