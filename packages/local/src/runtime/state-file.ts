import { readFile } from "node:fs/promises";
import { isProcessGone } from "../dynamodb/supervisor";

/** What `local.json` says about the process that wrote it. */
export type PreviousRun =
  | { kind: "none" }
  | { kind: "stale"; pid?: number }
  | { kind: "running"; pid: number; api?: string };

/**
 * Whether the endpoints file in a state directory belongs to a live `npm start`. A process
 * killed outright cannot remove its file, so a file whose writer is gone names dead ports and
 * is replaced; one whose writer still runs means two instances would share one database.
 */
export async function previousRun(stateFile: string): Promise<PreviousRun> {
  let text: string;
  try {
    text = await readFile(stateFile, "utf8");
  } catch {
    return { kind: "none" };
  }
  let written: { pid?: unknown; api?: unknown };
  try {
    written = JSON.parse(text) as { pid?: unknown; api?: unknown };
  } catch {
    return { kind: "stale" };
  }
  const pid = written?.pid;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) return { kind: "stale" };
  if (pid === process.pid || isProcessGone(pid)) return { kind: "stale", pid };
  return { kind: "running", pid, ...(typeof written.api === "string" ? { api: written.api } : {}) };
}
