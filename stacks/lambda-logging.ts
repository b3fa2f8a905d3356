import * as lambda from "aws-cdk-lib/aws-lambda";

/**
 * How every function logs. Lambda's own START, END and REPORT lines were more than half of a
 * call's log bytes, which are billed per byte: at system level WARN they are left out (duration
 * and memory stay in Lambda's metrics). Toolbus's lines are JSON already and pass unchanged.
 * The cost harness (bench/cost) reads this to know which lines Lambda adds.
 */
export const LAMBDA_LOGGING = {
  loggingFormat: lambda.LoggingFormat.JSON,
  systemLogLevelV2: lambda.SystemLogLevel.WARN,
} as const;

/** Whether Lambda writes its START, END and REPORT lines (they are INFO-level system logs). */
export const platformLinesLogged = (logging: {
  systemLogLevelV2: lambda.SystemLogLevel;
}): boolean =>
  logging.systemLogLevelV2 === lambda.SystemLogLevel.INFO ||
  logging.systemLogLevelV2 === lambda.SystemLogLevel.DEBUG;
