import type { LogRecord, LogSink } from "./log";

/**
 * The same records as the JSON lines, for a person watching `npm start`: time, level, the
 * message, then the fields that say which call it was and how it went, on one line. Colour
 * only on a terminal. `--log-format json` (or TOOLBUS_LOG_FORMAT=json) prints the JSON lines
 * instead, for tools that read them.
 */
export function prettyLines(
  stream: { write(chunk: string): unknown; isTTY?: boolean },
  colour = stream.isTTY === true,
): LogSink {
  const paint = (code: number, text: string) => (colour ? `\u001b[${code}m${text}\u001b[0m` : text);
  const LEVEL: Record<LogRecord["level"], string> = {
    DEBUG: paint(90, "debug"),
    INFO: paint(36, "info "),
    WARN: paint(33, "warn "),
    ERROR: paint(31, "error"),
  };
  return (record) => {
    // One line per call: its earlier steps (accepted, dispatched) are in the JSON lines.
    if (record.step !== undefined && record.step !== "finished") return;
    const {
      level,
      message,
      timestamp,
      service: _service,
      stage: _stage,
      step: _step,
      error,
      ...fields
    } = record;
    const parts = [paint(90, timestamp.slice(11, 23)), LEVEL[level], message];
    const outcome = fields.outcome;
    if (typeof outcome === "string") {
      parts.push(paint(outcome === "succeeded" ? 32 : 31, outcome));
      delete fields.outcome;
    }
    for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${scalar(value)}`);
    let line = parts.join(" ");
    if (error && typeof error === "object") {
      const { message: why, stack } = error as { message?: unknown; stack?: unknown };
      line += ` ${paint(31, String(why))}`;
      if (typeof stack === "string") line += `\n${paint(90, stack)}`;
    }
    stream.write(`${line}\n`);
  };
}

/** A field as one token: strings bare unless they hold spaces, the rest as JSON. */
function scalar(value: unknown): string {
  if (typeof value === "string") return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
