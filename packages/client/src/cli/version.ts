import { readFile } from "node:fs/promises";
import { z } from "zod";

const manifest = z.object({ name: z.literal("@toolbus/client"), version: z.string().min(1) });

/**
 * The version in the client's package.json. Found by walking up from this module, because it
 * runs from src/cli in a checkout and from a bundled chunk in dist once built.
 */
export async function clientVersion(): Promise<string> {
  let folder = new URL(".", import.meta.url);
  for (let level = 0; level < 4; level++) {
    const text = await readFile(new URL("package.json", folder), "utf8").catch(() => undefined);
    const parsed = text === undefined ? undefined : manifest.safeParse(JSON.parse(text));
    if (parsed?.success) return parsed.data.version;
    folder = new URL("..", folder);
  }
  return "unknown";
}
