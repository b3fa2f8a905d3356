import { chmod, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeyUnavailableError, localKeyFile, seal, unseal } from "./envelope";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "toolbus-envelope-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const alice = { pk: "CONN#alice", sk: "PROVIDER#github" };
const bob = { pk: "CONN#bob", sk: "PROVIDER#github" };

describe("envelope encryption of connection tokens", () => {
  it("opens what it sealed, for the same item only", async () => {
    const keys = localKeyFile(join(dir, "key"));
    const sealed = await seal(keys, '{"accessToken":"gho_secret"}', alice);
    expect(Buffer.from(sealed).toString("utf8")).not.toContain("gho_secret");
    expect(await unseal(keys, sealed, alice)).toBe('{"accessToken":"gho_secret"}');
    // A blob moved onto another person's row does not open there.
    await expect(unseal(keys, sealed, bob)).rejects.toThrow();
  });

  it("gives every sealed value its own data key", async () => {
    const keys = localKeyFile(join(dir, "key"));
    const one = Buffer.from(await seal(keys, "same", alice));
    const two = Buffer.from(await seal(keys, "same", alice));
    expect(one.equals(two)).toBe(false);
  });

  it("refuses a changed byte", async () => {
    const keys = localKeyFile(join(dir, "key"));
    const sealed = Buffer.from(await seal(keys, "token", alice));
    sealed[sealed.length - 1] = (sealed[sealed.length - 1] ?? 0) ^ 1;
    await expect(unseal(keys, sealed, alice)).rejects.toThrow();
  });

  it("creates the key file readable by its owner alone", async () => {
    const path = join(dir, "nested", "key");
    await seal(localKeyFile(path), "token", alice);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("says the key file is missing rather than making a new one to read with", async () => {
    const path = join(dir, "key");
    const sealed = await seal(localKeyFile(path), "token", alice);
    await rm(path);
    const error = await unseal(localKeyFile(path), sealed, alice).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyUnavailableError);
    expect((error as Error).message).toMatch(/missing/);
  });

  it("says a key file it cannot read or use cannot be read", async () => {
    const path = join(dir, "key");
    const sealed = await seal(localKeyFile(path), "token", alice);
    await writeFile(path, "short");
    await expect(unseal(localKeyFile(path), sealed, alice)).rejects.toThrow(/32-byte/);
    await writeFile(path, Buffer.alloc(32, 7));
    await expect(unseal(localKeyFile(path), sealed, alice)).rejects.toThrow(/another key/);
    if (process.getuid?.() !== 0) {
      await chmod(path, 0o000);
      await expect(unseal(localKeyFile(path), sealed, alice)).rejects.toThrow(/cannot be read/);
    }
  });
});
