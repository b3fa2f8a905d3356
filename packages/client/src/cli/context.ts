import type { ToolbusClient } from "../client.js";

// What every command handler is given. Its own module, so a command kept in a file of its
// own (listen.ts) and the table of all commands (commands.ts) both import it, not each other.

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
