import type { CallView } from "../schemas.js";
import { table } from "./format.js";

/** One row per call awaiting approval: when it expires, what it would run, who asked. */
export function approvalTable(calls: readonly CallView[]): string {
  return table(
    ["EXPIRES", "TOOL", "REQUESTED BY", "RUN / CALL"],
    calls.map((call) => [
      // Every call awaiting approval has one; "-" only for a server older than the field
      // (added 2026-11-26). Drop the "-" after 2027-03-31, once no stage runs a server that old.
      call.approval?.expiresAt ?? "-",
      call.toolId,
      `${call.requestedBy.id} (${call.requestedBy.role})`,
      `${call.parentRunId} / ${call.callId}`,
    ]),
  );
}
