import { readFile } from "node:fs/promises";
import { UsageError } from "./errors.js";

// Reading the JSON a command is given (a tool's input, an agent, a registration, a pattern):
// what cannot be read or parsed is a usage error that names where it came from.

export async function readJsonFile(path: string, shown: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === "ENOENT"
        ? `${shown} does not exist.`
        : `Cannot read ${shown}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseJson(text, shown);
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

export async function readAll(stream: AsyncIterable<string | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}
