import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

let system: TestToolbus;
beforeAll(async () => {
  system = await startTestToolbus();
});
afterAll(() => system.stop());

/** Two inputs told apart by their results: readability_analyzer counts each one's words. */
interface Contender {
  input: { text: string };
  words: number;
}
const CAT: Contender = { input: { text: "The cat sat on the mat." }, words: 6 };
const DOGS: Contender = {
  input: { text: "Dogs bark at night. Cats sleep all day long." },
  words: 9,
};

function post(runId: string, { input }: Contender) {
  return system.request(`/v1/runs/${runId}/calls`, {
    method: "POST",
    json: { tool: "readability_analyzer", input, callId: "raced", wait: 10 },
  });
}

interface CallView {
  status: string;
  result: { data: { words: number } };
}

describe("two calls racing with the same run and call id but different inputs", () => {
  // Both requests are in flight at once, sent in either order and more than once, so the
  // store's conditional write picks the winner, not the order the test sends them in.
  it.each([
    ["the cat's", [CAT, DOGS]],
    ["the dogs'", [DOGS, CAT]],
    ["the cat's, again", [CAT, DOGS]],
    ["the dogs', again", [DOGS, CAT]],
  ] as const)(
    "answers one 200 and the other 409, and keeps the winner's input (%s sent first)",
    async (_, contenders) => {
      const runId = system.runId();
      const responses = await Promise.all(contenders.map((contender) => post(runId, contender)));
      expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
      const wonAt = responses.findIndex((response) => response.status === 200);
      const [winner, loser] = wonAt === 0 ? contenders : [contenders[1], contenders[0]];
      const [won, lost] = wonAt === 0 ? responses : [responses[1], responses[0]];

      const call = (await won?.json()) as CallView;
      expect(call.status).toBe("succeeded");
      expect(call.result.data.words).toBe(winner.words);
      expect(await lost?.json()).toMatchObject({
        error: { code: "conflict", message: expect.stringContaining("raced") },
      });

      // The stored call is the winner's: its result, and the only call the run announced.
      expect(await (await system.request(`/v1/runs/${runId}/calls/raced`)).json()).toEqual(call);
      const events = await system.events<{ detailType: string; detail: { input?: unknown } }>(
        runId,
      );
      expect(
        events
          .filter((event) => event.detailType === "ToolCallScheduled")
          .map((event) => event.detail.input),
      ).toEqual([winner.input]);

      // And it stays the winner's: its input replays the call, the other input is refused again.
      expect((await post(runId, winner)).status).toBe(200);
      expect((await post(runId, loser)).status).toBe(409);
    },
  );
});
