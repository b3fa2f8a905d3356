import { TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { CallRecord } from "@toolbus/wire/model/call";
import { ToolbusError, ValidationError } from "../../errors";
import { GroupCommit, type ItemOutcome } from "../../util/group-commit";
import { DynamoCallRuns } from "./call-runs";
import type { DynamoStoreOptions } from "./client";
import { logSortKey, runPartition } from "./items";
import {
  APPEND_ATTEMPTS,
  appendGaveUp,
  forgetHead,
  headOf,
  pauseBeforeAttempt,
  rememberHead,
} from "./log-ends";
import { appendAsFinisher, logsAlone, withoutLoggedAlone } from "./log-finisher";
import { markCall, rememberMarks } from "./log-marks";
import {
  callKeyOf,
  entryCount,
  type LogRequest,
  logEntries,
  mergeByCall,
  unloggedEvents,
} from "./log-requests";
import { perTable } from "./per-table";

/** Requests one flush takes; they go in as many transactions as their calls need. */
const MAX_REQUESTS = 200;
/**
 * Actions per transaction, DynamoDB's limit: a call takes one for its update and at most one
 * per event (fewer where its events share an entry, see logEntries), so calls are counted in
 * by their entries. A call's progress steps are throttled to two a second, so one call never
 * brings near this many to a flush.
 */
const MAX_ACTIONS = 100;
/** Event bytes per flush, well under a transaction's 4 MB with the calls' own items. */
const MAX_BYTES = 2_000_000;

/**
 * Appends to run logs so that every reader can follow a run by position alone: event n+1 is
 * written only by a writer that saw event n, in a transaction that claims its slot only if it
 * is free (`attribute_not_exists`). So the events of a run are always 1..n with no gap that
 * outlives a transaction in flight, however many processes write; a writer whose view of the
 * run was stale loses the slot and tries again from the run's real end. A call's events
 * appended together share one entry (log-requests.ts, logEntries; one each past a size bound),
 * keyed by the first one's place, the last one's under `last`: every writer appending after
 * the same view of the run claims that same first slot, so a stale view is caught whatever
 * each writer appends, and the places after it in the entry's range never become items. The
 * same transaction marks the call (`scheduledLogSeq`, `resultLogSeq`) on the condition that
 * it was not marked: an event redelivered or announced again is logged once. Logging a result
 * also takes the call off the outbox index (`resultPublishedAt`): announced means in the log.
 *
 * A call the API ran for a waiting caller is logged by the API alone, nobody else being told of
 * its events: its entry, then its marks, without a transaction (log-finisher.ts).
 *
 * One line per table and process, one write in flight: a second would claim the same slots.
 * Requests arriving meanwhile go together in the next. Where one process writes the whole table
 * (`npm start`), `options.appendLog` appends instead, with plain puts (log-sole-writer.ts).
 */
export const logWriter = perTable(
  (options): GroupCommit<LogRequest, void> =>
    new GroupCommit(
      (requests) =>
        options.appendLog ? options.appendLog(options, requests) : flush(options, requests),
      {
        maxItems: MAX_REQUESTS,
        maxBytes: MAX_BYTES,
        sizeOf: (request) => JSON.stringify(request.events).length,
        maxInFlight: 1,
      },
    ),
);

async function flush(
  options: DynamoStoreOptions,
  requests: LogRequest[],
): Promise<ItemOutcome<void>[]> {
  const merged = mergeByCall(requests).filter((request) => request.events.length > 0);
  const outcomes = new Map<string, ItemOutcome<void>>();
  const together: LogRequest[] = [];
  for (const request of merged) {
    try {
      // A finisher that logs alone needs no transaction (log-finisher.ts); what such a
      // finisher may have logged already is marked, not logged again.
      const left = logsAlone(request)
        ? await appendAsFinisher(options, request)
        : await withoutLoggedAlone(options, request);
      if (left && left.events.length > 0) together.push(left);
      else outcomes.set(callKeyOf(request.call), done);
    } catch (error) {
      outcomes.set(callKeyOf(request.call), { ok: false, error });
    }
  }
  for (const chunk of byActions(together)) {
    for (const [key, outcome] of await flushChunk(options, chunk)) outcomes.set(key, outcome);
  }
  return requests.map(
    (request) =>
      outcomes.get(callKeyOf(request.call)) ??
      // A request with nothing left to log (all its events were marked): done.
      (request.events.length === 0 ? { ok: true, value: undefined } : missingOutcome()),
  );
}

/** The requests in order, in runs whose actions (an update and its entries) fit one transaction. */
function byActions(requests: LogRequest[]): LogRequest[][] {
  const chunks: LogRequest[][] = [];
  let chunk: LogRequest[] = [];
  let actions = 0;
  for (const request of requests) {
    const own = entryCount(request.events) + 1;
    if (chunk.length > 0 && actions + own > MAX_ACTIONS) {
      chunks.push(chunk);
      chunk = [];
      actions = 0;
    }
    chunk.push(request);
    actions += own;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** One transaction for the chunk; if any call in it conflicts, each call on its own. */
async function flushChunk(
  options: DynamoStoreOptions,
  chunk: LogRequest[],
): Promise<Map<string, ItemOutcome<void>>> {
  const outcomes = new Map<string, ItemOutcome<void>>();
  if (chunk.length > 1) {
    try {
      await transact(options, chunk);
      for (const request of chunk) outcomes.set(callKeyOf(request.call), done);
      return outcomes;
    } catch (error) {
      if (!isCancelled(error)) {
        for (const request of chunk) outcomes.set(callKeyOf(request.call), { ok: false, error });
        return outcomes;
      }
      // One call's conflict cancels them all: each goes again on its own, below.
    }
  }
  for (const request of chunk) {
    try {
      await appendAlone(options, request);
      outcomes.set(callKeyOf(request.call), done);
    } catch (error) {
      outcomes.set(callKeyOf(request.call), { ok: false, error });
    }
  }
  return outcomes;
}

const done: ItemOutcome<void> = { ok: true, value: undefined };

const missingOutcome = (): ItemOutcome<void> => ({
  ok: false,
  error: new ToolbusError("A log request was left without an outcome."),
});

/** One call's events, retried until they are in the log or the log shows they were already. */
async function appendAlone(options: DynamoStoreOptions, request: LogRequest): Promise<void> {
  let { call, events } = request;
  for (let attempt = 1; events.length > 0; attempt++) {
    try {
      await transact(options, [{ call, events }]);
      return;
    } catch (error) {
      if (!isCancelled(error) || attempt >= APPEND_ATTEMPTS) throw unavailableAfter(error, attempt);
      const reasons = cancellationCodes(error);
      if (reasons.at(-1) === "ConditionalCheckFailed") {
        // The call is marked already (or gone): what is left to log is what it does not say.
        const stored = await readCall(options, call);
        events = unloggedEvents(stored, events);
        call = stored;
        if (!stored.result && events.some((event) => event.detailType === "ToolResultReceived")) {
          throw new ValidationError("A result is logged only for a call that has one.", {
            details: { parentRunId: call.parentRunId, callId: call.callId },
          });
        }
      }
      // A slot was taken: this process's idea of the run's end was stale.
      if (reasons.slice(0, -1).includes("ConditionalCheckFailed")) {
        forgetHead(options, call.parentRunId);
      }
      await pauseBeforeAttempt(attempt);
    }
  }
}

function unavailableAfter(error: unknown, attempt: number): unknown {
  if (!isCancelled(error)) return error;
  return appendGaveUp(attempt, error, cancellationCodes(error));
}

async function readCall(options: DynamoStoreOptions, call: CallRecord): Promise<CallRecord> {
  const stored = await new DynamoCallRuns(options).get(call.parentRunId, call.callId);
  if (!stored) {
    throw new ValidationError("An event names a call that was never recorded.", {
      details: { parentRunId: call.parentRunId, callId: call.callId },
    });
  }
  return stored;
}

/** Writes each request's entries at the end of its run and marks its call, all or nothing. */
async function transact(options: DynamoStoreOptions, requests: LogRequest[]): Promise<void> {
  const { client, tableName } = options;
  const at = (options.now?.() ?? new Date()).toISOString();
  const ends = new Map<string, number>();
  const actions: NonNullable<
    ConstructorParameters<typeof TransactWriteCommand>[0]["TransactItems"]
  > = [];
  const placed: { request: LogRequest; seqs: number[] }[] = [];
  for (const request of requests) {
    const runId = request.call.parentRunId;
    let end = ends.get(runId) ?? (await headOf(options, runId));
    // Each event keeps its own place; a call's events share one entry, keyed by the first.
    const seqs = request.events.map((_, index) => end + 1 + index);
    for (const entry of logEntries(request.events, end + 1)) {
      actions.push({
        Put: {
          TableName: tableName,
          Item: { pk: runPartition(runId), sk: logSortKey(entry.first), ...entry.fields },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      });
    }
    end += request.events.length;
    ends.set(runId, end);
    actions.push({ Update: { TableName: tableName, ...markCall(request, seqs, at) } });
    placed.push({ request, seqs });
  }
  await client.send(new TransactWriteCommand({ TransactItems: actions }));
  for (const [runId, end] of ends) rememberHead(options, runId, end);
  for (const { request, seqs } of placed) rememberMarks(options, request, seqs, at);
}

function isCancelled(error: unknown): boolean {
  return error instanceof Error && error.name === "TransactionCanceledException";
}

/** The reason code of each action of a cancelled transaction, in order ("None" if it was fine). */
function cancellationCodes(error: unknown): string[] {
  const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
  return (reasons ?? []).map((reason) => reason.Code ?? "None");
}
