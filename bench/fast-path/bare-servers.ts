import { join } from "node:path";
import { type ChildGroup, spawnGroup } from "./children";

const SERVERS = join(import.meta.dirname, "servers");
const STARTUP_TIMEOUT_MS = 60_000;

export interface BareServer {
  child: ChildGroup;
  /** `http://127.0.0.1:<port>` */
  origin: string;
}

/**
 * Runs one of ./servers in a child Node process through tsx (as `npm start` runs Toolbus),
 * and reads the port it prints once it listens.
 */
export async function startBareServer(
  name: string,
  file: string,
  env?: NodeJS.ProcessEnv,
): Promise<BareServer> {
  const args = ["--import", "tsx", join(SERVERS, file)];
  const child = spawnGroup(
    name,
    process.execPath,
    args,
    env ? { ...process.env, ...env } : undefined,
  );
  try {
    const port = await child.waitForLine(/^\d+$/, STARTUP_TIMEOUT_MS);
    return { child, origin: `http://127.0.0.1:${port}` };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
