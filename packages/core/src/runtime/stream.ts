import type { CallRecord } from "@toolbus/wire/model/call";
import type { RunEvent } from "@toolbus/wire/model/events";
import * as z from "zod";
import { ValidationError } from "../errors";
import { fallbackLogger } from "../observability/log";
import type { EventStream } from "../ports";
import { type VerifyDeps, verifiedEvent } from "./recorder";

export interface StreamWriterDeps extends VerifyDeps {
  stream: EventStream;
  /**
   * The events of a batch of run-log entries, as the table's change stream hands them over
   * (the store knows its items); undefined for any other input.
   */
  loggedEvents?: (input: unknown) => RunEvent[] | undefined;
}

/**
 * An SQS batch, as a FIFO queue fed the stream's function on AWS before it was fed by the
 * table's change stream: read for the one release whose deploy may still hand one over (remove
 * after 2027-01-31).
 */
const sqsBatch = z.object({
  Records: z.array(z.object({ body: z.string() })).min(1),
});

/**
 * Appends Toolbus events to the stage's stream, in the order they arrive. On AWS the table's
 * change stream feeds it the run-log entries as they are written (each run's in the order it
 * logged them), and those are appended as they are: only Toolbus writes the table. (Under
 * `npm start` nothing hands it anything: the table's only writer puts each chunk in the same
 * request as the entries it streams, log-sole-writer.ts.) Bus events, from the queue a stage
 * deployed before the change stream (or one at a time), are kept only when their call record
 * confirms them (the recorder's check), and one that is not a Toolbus event at all is reported
 * and passed over, so it cannot hold up the ones behind it.
 */
export function createStreamWriter(deps: () => StreamWriterDeps | Promise<StreamWriterDeps>) {
  return async (input: unknown): Promise<void> => {
    const resolved = await deps();
    const logged = resolved.loggedEvents?.(input);
    if (logged) {
      if (logged.length > 0) await resolved.stream.append(logged);
      return;
    }
    const batch = sqsBatch.safeParse(input);
    const events = batch.success
      ? batch.data.Records.map((record) => parseBody(record.body))
      : [input];
    // Each call's record is read once a batch: a batch holds only events already published,
    // and a call's record is written before any of its events is, so the one read confirms
    // them all (a synchronous call's two events come in one batch: one read unit, not two).
    const records = new Map<string, Promise<CallRecord | undefined>>();
    const calls: VerifyDeps["calls"] = {
      get: (parentRunId, callId) => {
        const key = `${parentRunId}\n${callId}`;
        let record = records.get(key);
        if (!record) {
          record = resolved.calls.get(parentRunId, callId);
          records.set(key, record);
        }
        return record;
      },
    };
    const entries: RunEvent[] = [];
    for (const event of events) {
      try {
        const verified = await verifiedEvent(event, { ...resolved, calls });
        if (verified) entries.push(verified.entry);
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        (resolved.log ?? fallbackLogger()).warn("event refused: not a Toolbus event", {
          reason: error.message,
        });
      }
    }
    if (entries.length > 0) await resolved.stream.append(entries);
  };
}

function parseBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
