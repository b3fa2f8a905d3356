import { randomBytes } from "node:crypto";
import { chmod, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * The bootstrap admin key for a local stage: TOOLBUS_ADMIN_KEY when set, otherwise one
 * generated on first run and kept in the state folder, readable by this user only.
 */
export async function localAdminKey(
  stateDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ key: string; source: "environment" | "file" | "generated"; file?: string }> {
  if (env.TOOLBUS_ADMIN_KEY) return { key: env.TOOLBUS_ADMIN_KEY, source: "environment" };
  const file = join(stateDir, "admin-key");
  const existing = await readFile(file, "utf8").catch(() => undefined);
  if (existing?.trim()) return { key: existing.trim(), source: "file", file };
  const key = `tbk_admin_${randomBytes(32).toString("base64url")}`;
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return { key, source: "generated", file };
}
