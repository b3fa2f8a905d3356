import { createToolbusClient } from "../client.js";
import { ToolbusClientError } from "../errors.js";
import { parseCommandLine } from "./args.js";
import { type Connection, resolveConnection } from "./config.js";
import { hintOf, UsageError } from "./errors.js";
import { clientVersion } from "./version.js";

export { groupHelp, HELP } from "./args.js";
export { COMMANDS, type CommandName } from "./commands/index.js";
export { type Connection, resolveConnection, STATE_DIR } from "./config.js";
export { UsageError } from "./errors.js";
export { clientVersion } from "./version.js";

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  stdin: AsyncIterable<string | Uint8Array>;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Stops a running command (Ctrl-C): `events --follow` then ends with exit code 130. */
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/**
 * Runs `toolbus <argv>` and resolves to its exit code: 0 ok, 1 failure (API error, no
 * response, or the called tool failed), 2 usage error, 130 interrupted. Never throws and
 * never exits the process, so it can run inside another program or a test.
 */
export async function runCli(
  argv: readonly string[],
  overrides: Partial<CliIo> = {},
): Promise<number> {
  const io: CliIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    // Lazily: touching process.stdin when no command reads it can keep a terminal waiting.
    stdin: { [Symbol.asyncIterator]: () => process.stdin[Symbol.asyncIterator]() },
    env: process.env,
    cwd: process.cwd(),
    ...overrides,
  };
  let asJson = argv.includes("--json");
  let connection: Connection | undefined;
  try {
    const parsed = parseCommandLine(argv);
    if (parsed.kind === "help") {
      io.stdout.write(parsed.text);
      return 0;
    }
    if (parsed.kind === "version") {
      io.stdout.write(`${await clientVersion()}\n`);
      return 0;
    }
    asJson = parsed.globals.json;
    connection = await resolveConnection({
      endpoint: parsed.globals.endpoint,
      key: parsed.globals.key,
      env: io.env,
      cwd: io.cwd,
    });
    const client = createToolbusClient({
      baseUrl: connection.endpoint,
      apiKey: connection.key,
      ...(io.fetch ? { fetch: io.fetch } : {}),
    });
    return await parsed.command.run(parsed.args, {
      client,
      io: {
        stdout: io.stdout,
        stderr: io.stderr,
        stdin: io.stdin,
        cwd: io.cwd,
        ...(io.signal ? { signal: io.signal } : {}),
      },
      json: asJson,
    });
  } catch (error) {
    if (io.signal?.aborted) return 130;
    report(error, io, asJson, connection);
    return error instanceof UsageError ? 2 : 1;
  }
}

function report(error: unknown, io: CliIo, asJson: boolean, connection: Connection | undefined) {
  if (!(error instanceof ToolbusClientError)) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(
      asJson
        ? `${JSON.stringify({ error: { code: "internal", message } })}\n`
        : `toolbus: unexpected error: ${message}\n`,
    );
    return;
  }
  const hint =
    error instanceof UsageError ? error.hint : (hintOf(error) ?? hintFor(error, connection));
  if (asJson) {
    const details = error instanceof UsageError ? undefined : error.details;
    const body = {
      error: {
        code: error.code,
        message: error.message,
        ...(error.status !== undefined ? { status: error.status } : {}),
        ...(details !== undefined ? { details } : {}),
        ...(hint ? { hint } : {}),
      },
    };
    io.stderr.write(`${JSON.stringify(body)}\n`);
    return;
  }
  const lines = [`toolbus: ${error.message}${describeStatus(error)}`];
  if (!(error instanceof UsageError)) lines.push(...detailLines(error.details));
  if (error.requestId && error.status !== undefined && error.status >= 500) {
    lines.push(`  request id: ${error.requestId}`);
  }
  if (hint) lines.push(hint);
  io.stderr.write(`${lines.join("\n")}\n`);
}

function describeStatus(error: ToolbusClientError): string {
  if (error instanceof UsageError) return "";
  return error.status === undefined ? ` [${error.code}]` : ` [${error.status} ${error.code}]`;
}

/** `details` as the API gives them: a list of `{ path, message }`, or anything else as JSON. */
function detailLines(details: unknown): string[] {
  if (details === undefined) return [];
  if (Array.isArray(details) && details.every(isIssue)) {
    return details.map((issue) => `  ${issue.path}: ${issue.message}`);
  }
  return [`  ${JSON.stringify(details)}`];
}

function isIssue(value: unknown): value is { path: string; message: string } {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { path?: unknown }).path === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}

function hintFor(
  error: ToolbusClientError,
  connection: Connection | undefined,
): string | undefined {
  if (!connection) return undefined;
  if (error.code === "network_error") {
    return `Is Toolbus running at ${connection.endpoint} (from ${connection.sources.endpoint})?`;
  }
  if (error.status === 401) return `The API key from ${connection.sources.key} was refused.`;
  return undefined;
}
