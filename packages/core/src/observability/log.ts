/**
 * Structured logs: one JSON object per line, in the shape AWS Lambda Powertools' Logger
 * writes (`level`, `message`, `timestamp`, `service`, then the fields), so CloudWatch Logs
 * Insights queries written for Powertools work unchanged. Our own few lines rather than
 * Powertools itself: its Logger and Metrics weigh ~35 KB minified, which the recorder's and
 * sweeper's bundle budgets (380 KB) cannot take, and we use none of their extras (sampling,
 * buffering, middleware).
 *
 * Only what a caller passes is logged: call inputs, outputs and secrets are never fields
 * unless a stage opts in to inputs (`observability.logInputs`).
 */

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface LogRecord extends LogFields {
  level: Uppercase<LogLevel>;
  message: string;
  timestamp: string;
  service: string;
}

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** The same logger with `fields` on every line it writes (a call's ids, a request's). */
  child(fields: LogFields): Logger;
}

/** Where records go: a JSON line on stdout in Lambda, a readable line under `npm start`. */
export type LogSink = (record: LogRecord) => void;

export interface LoggerOptions {
  service: string;
  /** Lines below this level are dropped. Default `info`. */
  level?: LogLevel;
  sink?: LogSink;
  /** Fields on every line: the stage, a function's name. */
  fields?: LogFields;
  now?: () => Date;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const LOG_LEVELS = Object.keys(RANK) as LogLevel[];

export function createLogger(options: LoggerOptions): Logger {
  const sink = options.sink ?? jsonLines(process.stdout);
  const threshold = RANK[options.level ?? "info"];
  const now = options.now ?? (() => new Date());
  const make = (persistent: LogFields): Logger => {
    const write = (level: LogLevel) => (message: string, fields?: LogFields) => {
      if (RANK[level] < threshold) return;
      sink({
        level: level.toUpperCase() as Uppercase<LogLevel>,
        message,
        timestamp: now().toISOString(),
        service: options.service,
        ...persistent,
        ...(fields ? loggable(fields) : {}),
      });
    };
    return {
      debug: write("debug"),
      info: write("info"),
      warn: write("warn"),
      error: write("error"),
      child: (fields) => make({ ...persistent, ...loggable(fields) }),
    };
  };
  return make(loggable(options.fields ?? {}));
}

let fallback: Logger | undefined;

/**
 * Where code run without a stage's logger (a library caller, a unit under test) writes its
 * warnings and errors: the same JSON lines, on stderr.
 */
export function fallbackLogger(): Logger {
  fallback ??= createLogger({ service: "toolbus", sink: jsonLines(process.stderr) });
  return fallback;
}

/** One JSON object per line: what CloudWatch Logs indexes field by field. */
export function jsonLines(stream: { write(chunk: string): unknown }): LogSink {
  return (record) => {
    stream.write(`${safeJson(record)}\n`);
  };
}

/** Errors become `{ name, message, stack }`: their stack stays inside the log line. */
function loggable(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    out[key] = value instanceof Error ? errorFields(value) : value;
  }
  return out;
}

function errorFields(error: Error): LogFields {
  return {
    name: error.name,
    message: error.message,
    ...("code" in error && typeof error.code === "string" ? { code: error.code } : {}),
    stack: error.stack,
  };
}

/** A log line must never throw: cycles and BigInts become strings rather than lose the line. */
function safeJson(record: LogRecord): string {
  try {
    return JSON.stringify(record, (_key, value) =>
      typeof value === "bigint" ? value.toString() : value,
    );
  } catch {
    return JSON.stringify({
      level: record.level,
      message: record.message,
      timestamp: record.timestamp,
      service: record.service,
      logError: "the line's fields could not be written as JSON",
    });
  }
}
