import { describe, expect, it } from "vitest";
import { isProcessGone, startSupervised } from "./supervisor";

describe("startSupervised", () => {
  it("exits with the program's status when the program ends by itself", async () => {
    const supervised = await startSupervised("/bin/sh", ["-c", "exit 3"]);

    expect(await supervised.exited).toEqual({ code: 3, signal: null });
    expect(isProcessGone(supervised.pid)).toBe(true);
  });

  it("escalates to SIGKILL when the program ignores SIGTERM", async () => {
    const supervised = await startSupervised("/bin/sh", [
      "-c",
      "trap '' TERM; while :; do sleep 1; done",
    ]);

    await supervised.stop();

    expect(isProcessGone(supervised.pid)).toBe(true);
    expect(supervised.hasExited()).toBe(true);
  }, 30_000);

  it("keeps the program's output for error messages", async () => {
    const supervised = await startSupervised("/bin/sh", [
      "-c",
      "echo to-stdout; echo to-stderr >&2",
    ]);

    await supervised.exited;

    expect(supervised.outputTail()).toContain("to-stdout");
    expect(supervised.outputTail()).toContain("to-stderr");
  });
});
