import { afterEach, describe, expect, it, vi } from "vitest";
import { deploymentFromEnv } from "../packages/core/src/deployment";
import { reportFinished } from "../packages/core/src/observability/calls";
import type { CallRecord, CallResult } from "../packages/wire/src/model/call";
import { pendingCall, succeededResult } from "./support/calls";

/**
 * The one line a synchronous call the API runs writes, and its metrics line, as a Lambda
 * function writes them (the stage's deployment: JSON log lines and EMF, both on stdout). Log
 * bytes are billed per call (bench/results/cost.md), so the line's fields and size are pinned.
 */

const lambdaEnv: NodeJS.ProcessEnv = {
  TOOLBUS_TABLE: "toolbus-prod",
  TOOLBUS_BUS: "toolbus-prod-bus",
  TOOLBUS_CONFIG: JSON.stringify({ stage: "prod" }),
  AWS_LAMBDA_FUNCTION_NAME: "toolbus-api",
};

/** A typical synchronous call: ids as long as real ones, run directly by the API, traced. */
const syncCall = (result: Partial<CallResult> = {}): CallRecord =>
  pendingCall(
    "readability_analyzer",
    { text: "The cat sat on the mat." },
    {
      parentRunId: "cost-76d1d020-1e07-4b91-b434-558071cea59e",
      callId: "db6a2b35-158b-4c6c-bcb6-72eeea522b5b",
      requestedBy: { id: "112255eb1c5fea19", role: "member" },
      status: result.status ?? "succeeded",
      dispatch: "direct",
      trace: {
        traceId: "7b47094bb4936fb99ba390f8a2d68889",
        parentId: "00f067aa0ba902b7",
        sampled: true,
      },
      result: succeededResult({
        output: "ok",
        durationMs: 6,
        resultBytes: 975,
        completedAt: "2026-11-27T23:59:43.094Z",
        ...result,
      }),
    },
  );

/** What reportFinished writes to stdout through the stage's deployment, line by line. */
function written(call: CallRecord): string[] {
  const chunks: string[] = [];
  const write = vi
    .spyOn(process.stdout, "write")
    .mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
  try {
    const { log, metrics } = deploymentFromEnv({ ...lambdaEnv });
    reportFinished({ log, metrics }, call, { cacheable: false });
  } finally {
    write.mockRestore();
  }
  return chunks.join("").split("\n").filter(Boolean);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a synchronous call's log output on Lambda", () => {
  it("is one call line with what an operator needs, and nothing redundant", () => {
    const [line, emf, ...rest] = written(syncCall());
    expect(rest).toEqual([]);
    const record = JSON.parse(line ?? "") as Record<string, unknown>;
    // Powertools' shape first (docs/observability.md), then which call, then how it went.
    expect(Object.keys(record)).toEqual([
      "level",
      "message",
      "timestamp",
      "service",
      "stage",
      "parentRunId",
      "callId",
      "toolId",
      "principal",
      "traceId",
      "outcome",
      "durationMs",
      "cache",
      "dispatch",
    ]);
    expect(record).toMatchObject({
      level: "INFO",
      message: "call finished",
      service: "toolbus",
      stage: "prod",
      parentRunId: "cost-76d1d020-1e07-4b91-b434-558071cea59e",
      callId: "db6a2b35-158b-4c6c-bcb6-72eeea522b5b",
      toolId: "readability_analyzer",
      principal: "112255eb1c5fea19",
      traceId: "7b47094bb4936fb99ba390f8a2d68889",
      outcome: "succeeded",
      durationMs: 6,
      cache: "none",
      dispatch: "direct",
    });
    expect(record.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // Not pretty-printed, and no field the log group (`function`), the message (`step`) or an
    // empty value (no failure, no fallback) would repeat.
    expect(line).not.toContain("\n");
    expect(record).not.toHaveProperty("function");
    expect(record).not.toHaveProperty("step");
    expect(record).not.toHaveProperty("failureKind");
    expect(record).not.toHaveProperty("fallback");
    // Bytes with the newline, as CloudWatch Logs bills them: 446 before `function` and `step`
    // were dropped. The metrics line stays 387.
    expect(Buffer.byteLength(`${line}\n`)).toBe(403);
    expect(Buffer.byteLength(`${emf}\n`)).toBe(387);
  });

  it("keeps the metrics line CloudWatch reads: the same metrics, dimensions and values", () => {
    const [, emf] = written(syncCall());
    const parsed = JSON.parse(emf ?? "") as {
      _aws: {
        Timestamp: number;
        CloudWatchMetrics: Array<{
          Namespace: string;
          Dimensions: string[][];
          Metrics: Array<{ Name: string; Unit: string }>;
        }>;
      };
    } & Record<string, unknown>;
    expect(typeof parsed._aws.Timestamp).toBe("number");
    expect(parsed._aws.CloudWatchMetrics).toEqual([
      {
        Namespace: "Toolbus",
        Dimensions: [["stage", "toolId"]],
        Metrics: [
          { Name: "calls", Unit: "Count" },
          { Name: "succeeded", Unit: "Count" },
          { Name: "duration", Unit: "Milliseconds" },
          { Name: "dispatchedDirect", Unit: "Count" },
        ],
      },
    ]);
    expect(parsed).toMatchObject({
      stage: "prod",
      toolId: "readability_analyzer",
      calls: 1,
      succeeded: 1,
      duration: 6,
      dispatchedDirect: 1,
    });
  });

  it("names a failed call's failure kind on its line and in its metrics", () => {
    const [line, emf] = written(
      syncCall({
        status: "failed",
        failure: { kind: "timeout", message: "m", retryable: true, recovery: "replan" },
      }),
    );
    expect(JSON.parse(line ?? "")).toMatchObject({ outcome: "failed", failureKind: "timeout" });
    const parsed = JSON.parse(emf ?? "") as {
      _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][]; Metrics: { Name: string }[] }> };
    } & Record<string, unknown>;
    expect(parsed._aws.CloudWatchMetrics).toContainEqual(
      expect.objectContaining({
        Dimensions: [["stage", "failureKind"]],
        Metrics: [{ Name: "failures", Unit: "Count" }],
      }),
    );
    expect(parsed).toMatchObject({ failureKind: "timeout", failures: 1, failed: 1 });
  });
});
