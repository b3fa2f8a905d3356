import type { AttributeValue } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { RunEvent } from "@toolbus/wire/model/events";
import * as z from "zod";
import { logEntryEvents } from "./event-log";
import { LOG_PREFIX } from "./items";

/*
 * On AWS the stage stream is fed by the table's own change stream: every run-log entry
 * written (by the API, a tool's function or the recorder) comes to the stream's function as a
 * record of DynamoDB Streams, which Lambda reads for nothing. So the stage stream holds exactly
 * what the run logs hold, in the order each run logged it, without a queue or a read to check
 * an event against its call: only Toolbus writes the table.
 */

const changeRecord = z.object({
  eventSource: z.literal("aws:dynamodb"),
  eventName: z.string(),
  dynamodb: z.object({
    Keys: z.object({ sk: z.object({ S: z.string() }) }).passthrough(),
    NewImage: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** A batch of DynamoDB Streams records, as Lambda hands it over. */
const changeBatch = z.object({ Records: z.array(changeRecord).min(1) });

/**
 * The events of the run-log entries a batch of the table's change records holds, in the
 * batch's order; undefined for anything that is not such a batch. Records of other items are
 * passed over, as the event source's filter would.
 */
export function runLogEntryEvents(input: unknown): RunEvent[] | undefined {
  const batch = changeBatch.safeParse(input);
  if (!batch.success) return undefined;
  return batch.data.Records.flatMap((record) => {
    const image = record.dynamodb.NewImage;
    if (record.eventName !== "INSERT" || !image) return [];
    if (!record.dynamodb.Keys.sk.S.startsWith(LOG_PREFIX)) return [];
    return logEntryEvents(unmarshall(withBytes(image) as Record<string, AttributeValue>));
  });
}

/**
 * An image with its binary values as bytes: Lambda's JSON carries them base64-encoded, the
 * SDK's GetRecords as bytes already.
 */
function withBytes(image: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, bytes(value)]));
}

function bytes(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const attribute = value as Record<string, unknown>;
  if (typeof attribute.B === "string") return { B: Buffer.from(attribute.B, "base64") };
  if (Array.isArray(attribute.BS)) {
    return {
      BS: attribute.BS.map((item) =>
        typeof item === "string" ? Buffer.from(item, "base64") : item,
      ),
    };
  }
  if (Array.isArray(attribute.L)) return { L: attribute.L.map(bytes) };
  if (typeof attribute.M === "object" && attribute.M !== null) {
    return { M: withBytes(attribute.M as Record<string, unknown>) };
  }
  return value;
}
