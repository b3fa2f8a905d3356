import type { ToolbusClient } from "../client.js";

// What every command handler is given: the client, the process's streams and --json. Its own
// module, so the command groups (commands/*.ts) and the dispatcher (index.ts) both import it.

export interface CommandIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  stdin: AsyncIterable<string | Uint8Array>;
  cwd: string;
  signal?: AbortSignal;
}

export interface CommandContext {
  client: ToolbusClient;
  io: CommandIo;
  json: boolean;
}
