import { describe, expect, it } from "vitest";
import { createLogger, jsonLines, type LogRecord } from "./log";
import { prettyLines } from "./pretty";

const at = () => new Date("2026-11-24T10:00:00.000Z");

function captured(level?: "debug" | "info" | "warn" | "error") {
  const records: LogRecord[] = [];
  const logger = createLogger({
    service: "toolbus-test",
    level,
    sink: (record) => records.push(record),
    fields: { stage: "dev" },
    now: at,
  });
  return { logger, records };
}

describe("structured logs", () => {
  it("writes Powertools' fields first, then the logger's and the line's", () => {
    const { logger, records } = captured();
    logger
      .child({ callId: "c-1" })
      .info("call finished", { outcome: "succeeded", skipped: undefined });
    expect(records).toEqual([
      {
        level: "INFO",
        message: "call finished",
        timestamp: "2026-11-24T10:00:00.000Z",
        service: "toolbus-test",
        stage: "dev",
        callId: "c-1",
        outcome: "succeeded",
      },
    ]);
  });

  it("drops lines below its level", () => {
    const { logger, records } = captured("warn");
    logger.info("not written");
    logger.debug("not written");
    logger.warn("written");
    expect(records.map((r) => r.level)).toEqual(["WARN"]);
  });

  it("keeps an error's stack inside the line", () => {
    const { logger, records } = captured();
    logger.error("failed", { error: Object.assign(new Error("boom"), { code: "E_BOOM" }) });
    expect(records[0]?.error).toMatchObject({
      name: "Error",
      message: "boom",
      code: "E_BOOM",
      stack: expect.stringContaining("log.test.ts"),
    });
  });

  it("writes one JSON object per line, even for cycles and BigInts", () => {
    const chunks: string[] = [];
    const logger = createLogger({
      service: "s",
      sink: jsonLines({ write: (c) => chunks.push(c) }),
    });
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    logger.info("big", { n: 2n ** 64n });
    logger.info("cyclic", { cycle });
    expect(chunks.every((c) => c.endsWith("\n") && !c.slice(0, -1).includes("\n"))).toBe(true);
    expect(JSON.parse(chunks[0] ?? "").n).toBe("18446744073709551616");
    expect(JSON.parse(chunks[1] ?? "")).toMatchObject({
      message: "cyclic",
      logError: expect.any(String),
    });
  });
});

describe("readable lines for npm start", () => {
  it("puts a call's line on one line, its outcome in colour only on a terminal", () => {
    const out: string[] = [];
    const record = {
      level: "INFO" as const,
      message: "call finished",
      timestamp: "2026-11-24T10:00:00.123Z",
      service: "toolbus",
      stage: "local",
      outcome: "failed",
      toolId: "web_search",
      failureKind: "timeout",
      durationMs: 12,
      note: "two words",
    };
    prettyLines({ write: (c) => out.push(c) })(record);
    expect(out).toEqual([
      '10:00:00.123 info  call finished failed toolId=web_search failureKind=timeout durationMs=12 note="two words"\n',
    ]);
    prettyLines({ write: (c) => out.push(c), isTTY: true })(record);
    expect(out[1]).toContain("\u001b[31mfailed\u001b[0m");
    // A call's earlier steps are for the JSON lines: one line per call here.
    prettyLines({ write: (c) => out.push(c) })({
      ...record,
      message: "call accepted",
      step: "accepted",
    });
    expect(out).toHaveLength(2);
  });
});
