import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { UsageError } from "./errors.js";

/** Where `npm start` leaves its endpoints and the generated admin key, in the project folder. */
export const STATE_DIR = ".toolbus";

export interface Connection {
  endpoint: string;
  key: string;
  /** Where each came from, for error messages. */
  sources: { endpoint: string; key: string };
}

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });
const localState = z.object({ api: httpUrl, pid: z.number().int().positive().optional() }).loose();

/**
 * Endpoint and key, each from the first place that has it: flags, then the environment
 * (TOOLBUS_ENDPOINT, TOOLBUS_API_KEY), then what `npm start` wrote in ./.toolbus.
 */
export async function resolveConnection(options: {
  endpoint: string | undefined;
  key: string | undefined;
  env: NodeJS.ProcessEnv;
  cwd: string;
}): Promise<Connection> {
  const { env, cwd } = options;
  let endpoint: { value: string; source: string } | undefined;
  if (options.endpoint) endpoint = { value: options.endpoint, source: "--endpoint" };
  else if (env.TOOLBUS_ENDPOINT)
    endpoint = { value: env.TOOLBUS_ENDPOINT, source: "TOOLBUS_ENDPOINT" };
  else endpoint = await fromLocalState(cwd);
  if (!endpoint) {
    throw new UsageError("No Toolbus endpoint.", {
      hint: `Pass --endpoint <url>, set TOOLBUS_ENDPOINT, or run this where \`npm start\` is running (it writes ${STATE_DIR}/local.json).`,
    });
  }
  const checked = httpUrl.safeParse(endpoint.value);
  if (!checked.success) {
    throw new UsageError(
      `The endpoint from ${endpoint.source} (${endpoint.value}) must be an http(s) URL.`,
    );
  }

  let key: { value: string; source: string } | undefined;
  if (options.key) key = { value: options.key, source: "--key" };
  else if (env.TOOLBUS_API_KEY) key = { value: env.TOOLBUS_API_KEY, source: "TOOLBUS_API_KEY" };
  else key = await fromAdminKeyFile(cwd);
  if (!key) {
    throw new UsageError("No API key.", {
      hint: `Set TOOLBUS_API_KEY (or pass --key), or run this where \`npm start\` keeps ${STATE_DIR}/admin-key.`,
    });
  }
  return {
    endpoint: endpoint.value,
    key: key.value,
    sources: { endpoint: endpoint.source, key: key.source },
  };
}

async function fromLocalState(cwd: string) {
  const file = join(cwd, STATE_DIR, "local.json");
  const text = await readOptional(file);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not JSON.`, { cause: error });
  }
  const parsed = localState.safeParse(json);
  if (!parsed.success) {
    throw new UsageError(`${file} has no "api" URL; restart \`npm start\` to rewrite it.`);
  }
  const { pid } = parsed.data;
  if (pid !== undefined && isGone(pid)) {
    throw new UsageError(
      `${file} was left by an \`npm start\` that is no longer running (pid ${pid}); start it again, or pass --endpoint.`,
    );
  }
  return { value: parsed.data.api, source: file };
}

/** A process killed outright leaves its endpoints file behind, naming ports nobody serves. */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

async function fromAdminKeyFile(cwd: string) {
  const file = join(cwd, STATE_DIR, "admin-key");
  const value = (await readOptional(file))?.trim();
  return value ? { value, source: file } : undefined;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}`, { cause: error });
  }
}
