import { describe, expect, it } from "vitest";
import { callerLink, MAX_MESSAGES_ON_THE_WAY, MAX_RELAYED_BYTES } from "./link";
import { memoryCallChannel } from "./memory-channel";

const key = { parentRunId: "run-link", callId: "call-link" };
const caller = {
  principalId: "key-1",
  era: "legacy" as const,
  capabilities: { elicitation: {}, sampling: {}, roots: {} },
  logLevel: "debug" as const,
  progress: true,
};

describe("a call's link to its caller", () => {
  it("refuses a request too large to relay, without putting it to the caller", async () => {
    const channel = memoryCallChannel();
    const attachment = await channel.attach(key, caller);
    const link = callerLink(channel, key, () => undefined);
    const answer = await link.ask(
      "sampling/createMessage",
      {
        messages: [
          { role: "user", content: { type: "text", text: "x".repeat(MAX_RELAYED_BYTES) } },
        ],
      },
      new AbortController().signal,
    );
    expect(answer).toEqual({ error: { code: -32603, message: expect.stringMatching(/over the/) } });
    expect(link.answered()).toBe(false);
    await attachment.close({ gone: true });
  });

  it("sends messages in order, drops those past the bound, and settles once all are out", async () => {
    const channel = memoryCallChannel();
    const attachment = await channel.attach(key, caller);
    const stop = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const event of attachment.events(stop.signal)) {
        if (event.type === "notification" && event.notification.kind === "progress") {
          seen.push(event.notification.progress);
        }
      }
    })();
    const link = callerLink(channel, key, () => undefined);
    for (let step = 1; step <= MAX_MESSAGES_ON_THE_WAY + 10; step++) {
      link.tell({ kind: "progress", progress: step });
    }
    await link.settled();
    stop.abort();
    await reading;
    expect(seen).toEqual(Array.from({ length: MAX_MESSAGES_ON_THE_WAY }, (_, i) => i + 1));
    await attachment.close({ gone: true });
  });

  it("replaces a log message over the bound with a note of its size", async () => {
    const channel = memoryCallChannel();
    const attachment = await channel.attach(key, caller);
    const stop = new AbortController();
    const logs: unknown[] = [];
    const reading = (async () => {
      for await (const event of attachment.events(stop.signal)) {
        if (event.type === "notification" && event.notification.kind === "log") {
          logs.push(event.notification.data);
        }
      }
    })();
    const link = callerLink(channel, key, () => undefined);
    link.tell({ kind: "log", level: "info", data: "y".repeat(MAX_RELAYED_BYTES + 1) });
    await link.settled();
    stop.abort();
    await reading;
    expect(logs).toEqual([expect.stringMatching(/^\(a log message of \d+ bytes/)]);
    await attachment.close({ gone: true });
  });
});
