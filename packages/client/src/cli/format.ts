import type { CallView, CatalogDiff, RunEvent } from "../schemas.js";

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0),
      )
      .join("  ")
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join("\n")}\n`;
}

/** `Label:  value` lines with the labels aligned; undefined values are left out. */
export function fields(entries: readonly [string, string | undefined][]): string {
  const shown = entries.filter((entry): entry is [string, string] => entry[1] !== undefined);
  const width = Math.max(0, ...shown.map(([label]) => label.length + 1));
  return `${shown.map(([label, value]) => `${`${label}:`.padEnd(width)}  ${value}`.trimEnd()).join("\n")}\n`;
}

export function indent(text: string, by = "  "): string {
  return text
    .split("\n")
    .map((line) => (line ? `${by}${line}` : line))
    .join("\n");
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function list(values: readonly string[] | undefined): string {
  return values && values.length > 0 ? values.join(", ") : "-";
}

/** A call's result in words: what a person at a terminal wants first. */
export function callSummary(call: CallView): string {
  const status = (() => {
    switch (call.status) {
      case "succeeded":
      case "failed": {
        const notes = [
          `${Math.round(call.result.durationMs)} ms`,
          ...(call.result.cached ? ["cached"] : []),
          ...(call.result.stale ? ["stale"] : []),
          ...(call.result.truncated ? ["truncated"] : []),
        ];
        return `${call.status} (${notes.join(", ")})`;
      }
      default:
        return `${call.status} (not finished: toolbus calls show ${call.parentRunId} ${call.callId})`;
    }
  })();
  const failure = call.status === "failed" ? call.result.failure : undefined;
  const fallback = call.result?.fallback;
  const head = fields([
    ["Run", call.parentRunId],
    ["Call", call.callId],
    ["Tool", `${call.toolId} (${call.toolset})`],
    ["Status", status],
    [
      "Failure",
      failure
        ? `${failure.kind}: ${failure.message} (retryable: ${failure.retryable ? "yes" : "no"}, recovery: ${failure.recovery})`
        : undefined,
    ],
    ["Fallback", fallback ? `${fallback.from} -> ${fallback.to} (${fallback.reason})` : undefined],
  ]);
  if (call.status !== "succeeded") return head;
  const parts = [head, call.result.output.trimEnd(), ""];
  if (call.result.citations.length > 0) {
    parts.push(
      "Citations:",
      ...call.result.citations.map((c) => `  - ${c.title ? `${c.title} ` : ""}<${c.url}>`),
      "",
    );
  }
  return parts.join("\n");
}

export const EVENT_HEADERS = ["TIME", "EVENT", "CALL", "TOOL", "DETAIL"] as const;

/** One event as table cells, in the order of EVENT_HEADERS. */
export function eventCells(event: RunEvent): string[] {
  return [
    event.occurredAt,
    event.detailType,
    event.detail.callId,
    event.detail.toolId,
    eventDetail(event),
  ];
}

// Wide enough for an ISO time, the longest detail type (ToolCallApprovalRequested), a generated
// (UUID) call id and most tool ids, so rows printed one at a time while following line up.
const FOLLOW_WIDTHS = [24, 25, 36, 20] as const;

/** A row with fixed column widths, for output that cannot wait for the widest cell. */
export function fixedRow(
  cells: readonly string[],
  widths: readonly number[] = FOLLOW_WIDTHS,
): string {
  return `${cells
    .map((cell, index) => cell.padEnd(widths[index] ?? 0))
    .join("  ")
    .trimEnd()}\n`;
}

function eventDetail(event: RunEvent): string {
  switch (event.detailType) {
    case "ToolCallScheduled": {
      const { requestedBy, mode } = event.detail;
      return `by ${requestedBy.id} (${requestedBy.role})${mode ? `, mode ${mode}` : ""}`;
    }
    case "ToolCallApprovalRequested": {
      const { requestedBy, approval } = event.detail;
      return `awaiting approval until ${approval.expiresAt}, by ${requestedBy.id} (${requestedBy.role})`;
    }
    case "ToolCallProgress": {
      const { progress, total, message } = event.detail;
      return `progress ${progress}${total === undefined ? "" : `/${total}`}${message ? `: ${message}` : ""}`;
    }
    case "ToolResultReceived": {
      const detail = event.detail;
      const notes = [
        `${Math.round(detail.durationMs)} ms`,
        ...(detail.cached ? ["cached"] : []),
        ...(detail.stale ? ["stale"] : []),
      ].join(", ");
      return detail.status === "failed" && detail.failure
        ? `failed ${detail.failure.kind}: ${detail.failure.message} (${notes})`
        : `${detail.status} (${notes})`;
    }
  }
}

/** What a registration or refresh changed: one row per kind of change, with its tool ids. */
export function diffTable(diff: CatalogDiff): string {
  const rows = (["added", "removed", "changed", "unchanged"] as const).map((change) => [
    change,
    String(diff[change].length),
    list(diff[change]),
  ]);
  return table(["CHANGE", "COUNT", "TOOLS"], rows);
}
