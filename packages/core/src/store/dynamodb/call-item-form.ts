import { inputHashOf } from "../../util/canonical-json";
import { callOfKey } from "./items";

/*
 * A call item repeats what its keys and input already say: the run and call ids (pk, sk), the
 * time it was scheduled and its trace id (the trace index's keys, gsi3sk and gsi3pk), for a
 * call claimed as it was made (`dispatch: "direct"`) a start time equal to its scheduling, and
 * its input's hash. That is about 270 bytes of a small call's 1.3 KB, and DynamoDB bills every
 * write of the item per started KB: under 1 KB, the call's completion and its marks in the
 * log's transaction take one unit each instead of two. So the compact form leaves out each
 * field that comes back exactly, and readers put them back. Call items are written compact
 * from this release on; the release before already reads both forms, so a function still on it
 * during a deploy (or after a rollback to it) reads what this one writes. Readers keep reading
 * whole items too: earlier releases wrote them, and they stay in tables.
 */

type Item = Record<string, unknown>;
type Trace = { traceId?: unknown; [field: string]: unknown };

const TRACE_PREFIX = "TRACE#";
/** In this order: a start time is given back from a scheduling time that is. */
const DERIVABLE = ["parentRunId", "callId", "scheduledAt", "startedAt", "inputHash"] as const;

/**
 * The item, its input decoded, with every field its keys give back put back: what a call record
 * is parsed from.
 */
export function expandCallItem(item: Item): Item {
  const { runId, callId } = callOfKey(item);
  const scheduledAt = item.scheduledAt ?? item.gsi3sk;
  const trace = item.trace as Trace | undefined;
  return {
    parentRunId: runId,
    callId,
    // A direct call is claimed as it is made.
    ...(item.dispatch === "direct" && { startedAt: scheduledAt }),
    ...(item.inputHash === undefined &&
      item.input !== undefined && { inputHash: inputHashOf(item.input) }),
    // What the item holds wins over what its keys say.
    ...item,
    ...(scheduledAt !== undefined && { scheduledAt }),
    ...(trace &&
      typeof item.gsi3pk === "string" && {
        trace: { traceId: item.gsi3pk.slice(TRACE_PREFIX.length), ...trace },
      }),
  };
}

/**
 * The item (its input not encoded yet) without the fields its keys give back: each is left out only where expanding what
 * is left gives back exactly the value it had, so nothing is ever lost.
 */
export function compactCallItem(item: Item): Item {
  let compact = item;
  for (const field of DERIVABLE) {
    if (compact[field] === undefined) continue;
    const { [field]: value, ...without } = compact;
    if (expandCallItem(without)[field] === value) compact = without;
  }
  const trace = compact.trace as Trace | undefined;
  if (trace?.traceId !== undefined) {
    const { traceId, ...others } = trace;
    const without = { ...compact, trace: others };
    if ((expandCallItem(without).trace as Trace).traceId === traceId) compact = without;
  }
  return compact;
}
