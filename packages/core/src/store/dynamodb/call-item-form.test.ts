import { describe, expect, it } from "vitest";
import { inputHashOf } from "../../util/canonical-json";
import { compactCallItem, expandCallItem } from "./call-item-form";

const SCHEDULED = "2026-11-27T21:53:33.154Z";
const TRACE_ID = "2b21194d889c60aaa90b5be315b5546e";

/**
 * A direct call's item whole, as releases before this one wrote it (callItem compacts it now):
 * keys, trace index keys, fields.
 */
function directItem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    pk: "RUN#run-1",
    sk: "CALL#call-1",
    gsi3pk: `TRACE#${TRACE_ID}`,
    gsi3sk: SCHEDULED,
    parentRunId: "run-1",
    callId: "call-1",
    toolId: "readability_analyzer",
    input: { text: "Short words.", options: { lang: "en" } },
    inputHash: inputHashOf({ options: { lang: "en" }, text: "Short words." }),
    status: "running",
    dispatch: "direct",
    scheduledAt: SCHEDULED,
    startedAt: SCHEDULED,
    deadlineAt: "2026-11-27T21:54:08.154Z",
    trace: { traceId: TRACE_ID, parentId: "4bf92f3577b34da6", sampled: false },
    ...overrides,
  };
}

const bytes = (item: Record<string, unknown>) => JSON.stringify(item).length;

describe("the compact call item", () => {
  it("leaves out the ids, the scheduling, a direct call's start, the input's hash and the trace id, and reads them back", () => {
    const whole = directItem();
    const compact = compactCallItem(whole);
    for (const field of ["parentRunId", "callId", "scheduledAt", "startedAt", "inputHash"]) {
      expect(compact, field).not.toHaveProperty(field);
    }
    expect(compact.trace).toEqual({ parentId: "4bf92f3577b34da6", sampled: false });
    expect(expandCallItem(compact)).toEqual(whole);
    expect(bytes(whole) - bytes(compact)).toBeGreaterThan(200);
  });

  it("keeps a direct call's start that differs from its scheduling", () => {
    const late = directItem({ startedAt: "2026-11-27T21:53:33.999Z" });
    const compact = compactCallItem(late);
    expect(compact.startedAt).toBe("2026-11-27T21:53:33.999Z");
    expect(expandCallItem(compact)).toEqual(late);
  });

  it("keeps a start that differs from the scheduling, and a scheduling without a trace index", () => {
    const claimed = directItem({ dispatch: undefined, startedAt: "2026-11-27T21:53:34.000Z" });
    delete claimed.dispatch;
    const compact = compactCallItem(claimed);
    expect(compact.startedAt).toBe("2026-11-27T21:53:34.000Z");
    expect(expandCallItem(compact)).toEqual(claimed);

    const untraced = directItem();
    for (const field of ["gsi3pk", "gsi3sk", "trace"]) delete untraced[field];
    const kept = compactCallItem(untraced);
    expect(kept.scheduledAt).toBe(SCHEDULED);
    // A direct call's start still comes back from its scheduling, written or not.
    expect(kept).not.toHaveProperty("startedAt");
    expect(expandCallItem(kept)).toEqual(untraced);
  });

  it("keeps every field its keys do not repeat exactly", () => {
    // Written by hand: ids, a hash and a trace unlike the keys' and the input's. Nothing is
    // lost by compacting.
    const odd = directItem({
      parentRunId: "run-other",
      callId: "call-other",
      inputHash: "h",
      trace: { traceId: "0".repeat(32), sampled: true },
    });
    const compact = compactCallItem(odd);
    expect(compact).toMatchObject({
      parentRunId: "run-other",
      callId: "call-other",
      inputHash: "h",
    });
    expect(compact.trace).toEqual({ traceId: "0".repeat(32), sampled: true });
    expect(expandCallItem(compact)).toEqual(odd);
  });

  it("reads a whole item, as earlier releases wrote it, as it is", () => {
    const whole = directItem();
    expect(expandCallItem(whole)).toEqual(whole);
  });
});
