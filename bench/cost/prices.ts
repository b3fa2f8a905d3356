/**
 * AWS list prices the cost model charges, us-east-1, on-demand, first tier, no free tier.
 * Dated: the figures are AWS's published prices as we knew them on the date below; check
 * them against the pricing pages (listed) before quoting a result elsewhere, and change the
 * date with any figure.
 */
export const PRICES = {
  asOf: "2026-11-27",
  region: "us-east-1",
  /** aws.amazon.com/lambda/pricing: the stack deploys arm64 (Graviton) functions. */
  lambda: {
    architecture: "arm64",
    perMillionRequests: 0.2,
    /** Per GB-second of duration, first 7.5 billion GB-s a month (arm64). */
    perGbSecond: 0.0000133334,
  },
  /** aws.amazon.com/dynamodb/pricing/on-demand: prices since the November 2024 reduction. */
  dynamodb: {
    perMillionWriteUnits: 0.625,
    perMillionReadUnits: 0.125,
  },
  /** aws.amazon.com/eventbridge/pricing: custom events, each started 64 KB of an entry. */
  eventbridge: { perMillionEvents: 1.0 },
  /** aws.amazon.com/cloudwatch/pricing: Logs, standard class, data ingested. */
  cloudwatchLogs: { perGbIngested: 0.5 },
  /** aws.amazon.com/api-gateway/pricing: HTTP APIs, first 300 million a month, per 512 KB. */
  apiGateway: { perMillionHttpRequests: 1.0 },
} as const;

/**
 * What the issue compares against, per million synchronous tool calls (its figures, not
 * measured here): AgentCore Gateway's list price per tool invocation is the headline one.
 */
export const REFERENCES = {
  agentCoreGateway: { name: "AgentCore Gateway, $5 per million tool invocations", perMillion: 5 },
  issueBefore: { name: "the issue's count before the cuts ($30 per million)", perMillion: 30 },
  issueBeforeSubscribed: {
    name: "the issue's count before the cuts, one subscription ($44 per million)",
    perMillion: 44,
  },
  targetWithout: {
    name: "the issue's bar without subscriptions ($10 per million)",
    perMillion: 10,
  },
  targetWith: { name: "the issue's bar with one subscription ($15 per million)", perMillion: 15 },
} as const;
