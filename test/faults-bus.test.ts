import { afterEach, describe, expect, it } from "vitest";
import type { RunEventView } from "./support/http-calls";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus | undefined;
afterEach(async () => {
  await system?.stop();
  system = undefined;
});

/** Adds a subscriber rule on the system's own bus whose target always throws. */
async function addBrokenSubscriber(
  running: TestToolbus,
  runId: string,
  retryAttempts?: number,
): Promise<{ attempts: Map<string, number> }> {
  const attempts = new Map<string, number>();
  const arn = running.bus.registerFunction("broken-subscriber", (event) => {
    const id = (event as { id: string }).id;
    attempts.set(id, (attempts.get(id) ?? 0) + 1);
    throw new Error("subscriber is down");
  });
  await running.bus.dispatch("PutRule", {
    Name: "broken-subscriber",
    EventBusName: running.busName,
    EventPattern: JSON.stringify({ source: ["toolbus"], detail: { parentRunId: [runId] } }),
  });
  await running.bus.dispatch("PutTargets", {
    Rule: "broken-subscriber",
    EventBusName: running.busName,
    Targets: [
      {
        Id: "broken",
        Arn: arn,
        DeadLetterConfig: { Arn: "arn:aws:sqs:us-east-1:000000000000:subscriber-dlq" },
        ...(retryAttempts !== undefined
          ? { RetryPolicy: { MaximumRetryAttempts: retryAttempts } }
          : {}),
      },
    ],
  });
  return { attempts };
}

async function callAndDrain(running: TestToolbus, runId: string) {
  const response = await running.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input: { text: "A cat. A dog." }, wait: 10 },
  });
  expect(response.status).toBe(200);
  const call = (await response.json()) as { callId: string; status: string };
  expect(call.status).toBe("succeeded");
  await running.settle();
  return call;
}

describe("a failing bus target", () => {
  it("is retried 1 + defaultMaxRetries times, then dead-lettered with the event; the system's own targets are unaffected", async () => {
    system = await startTestToolbus({ bus: { defaultMaxRetries: 3 } });
    const runId = system.runId();
    const { attempts } = await addBrokenSubscriber(system, runId);
    const call = await callAndDrain(system, runId);

    const dead = system.bus.deadLetters().filter((d) => d.ruleName === "broken-subscriber");
    // Both events of the call reached the broken target, each 1 + 3 times, and both are kept.
    expect(dead).toHaveLength(2);
    for (const letter of dead) {
      expect(letter).toMatchObject({
        attempts: 4,
        targetId: "broken",
        deadLetterArn: "arn:aws:sqs:us-east-1:000000000000:subscriber-dlq",
        error: expect.stringMatching(/subscriber is down/),
      });
      expect(attempts.get(letter.eventId)).toBe(4);
    }
    const deadTypes = dead.map((d) => (d.input as { "detail-type": string })["detail-type"]);
    expect(deadTypes.sort()).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
    for (const letter of dead) {
      expect((letter.input as { detail: { callId: string } }).detail.callId).toBe(call.callId);
    }
    // Only the broken target dead-lettered: the tool handler and the recorder took theirs.
    expect(system.bus.deadLetters()).toHaveLength(2);
    const log = await system.request(`/v1/runs/${runId}/events`);
    const events = ((await log.json()) as { events: RunEventView[] }).events;
    expect(events.map((e) => e.detailType)).toEqual(["ToolCallScheduled", "ToolResultReceived"]);
  });

  it("follows the target's own RetryPolicy", async () => {
    system = await startTestToolbus();
    const runId = system.runId();
    const { attempts } = await addBrokenSubscriber(system, runId, 1);
    await callAndDrain(system, runId);
    const dead = system.bus.deadLetters();
    expect(dead).toHaveLength(2);
    for (const letter of dead) {
      expect(letter.attempts).toBe(2);
      expect(attempts.get(letter.eventId)).toBe(2);
    }
    expect(system.bus.deliveryStats()).toMatchObject({ deadLettered: 2, failedAttempts: 4 });
  });
});
