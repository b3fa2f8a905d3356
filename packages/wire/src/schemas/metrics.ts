import * as z from "zod";

const dimensions = z.record(z.string(), z.string());

/** `GET /v1/metrics`: this process's counters (`npm start`), or where CloudWatch keeps them. */
export const metricsView = z
  .object({
    /** Counted here (`npm start`), or in CloudWatch (AWS: one function per tool). */
    source: z.enum(["process", "cloudwatch"]),
    since: z.string().optional(),
    counters: z.array(z.object({ name: z.string(), dimensions, value: z.number() })).optional(),
    latencies: z
      .array(
        z.object({
          name: z.string(),
          dimensions,
          count: z.number(),
          p50: z.number(),
          p90: z.number(),
          p99: z.number(),
          max: z.number(),
        }),
      )
      .optional(),
    /** On AWS: where the same metrics are. */
    cloudwatch: z.object({ namespace: z.string(), dimensions }).optional(),
  })
  .meta({ id: "Metrics" });
