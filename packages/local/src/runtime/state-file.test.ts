import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { previousRun } from "./state-file";

describe("the endpoints file a previous npm start left", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolbus-state-file-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const written = async (content: string) => {
    const file = join(dir, `local-${Math.random()}.json`);
    await writeFile(file, content);
    return file;
  };

  it("is none when there is no file, and stale when it is not JSON or names no pid", async () => {
    expect(await previousRun(join(dir, "missing.json"))).toEqual({ kind: "none" });
    expect(await previousRun(await written("{cut off"))).toEqual({ kind: "stale" });
    expect(await previousRun(await written('{"api":"http://x"}'))).toEqual({ kind: "stale" });
  });

  it("is stale when the process that wrote it is gone", async () => {
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    expect(await previousRun(await written(JSON.stringify({ pid: gone })))).toEqual({
      kind: "stale",
      pid: gone,
    });
  });

  it("is running while the process that wrote it lives, so a second start must refuse", async () => {
    const alive = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
      const file = await written(JSON.stringify({ pid: alive.pid, api: "http://127.0.0.1:1" }));
      expect(await previousRun(file)).toEqual({
        kind: "running",
        pid: alive.pid,
        api: "http://127.0.0.1:1",
      });
    } finally {
      alive.kill("SIGKILL");
    }
  });
});
