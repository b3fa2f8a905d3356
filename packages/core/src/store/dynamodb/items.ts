import { sha256Hex } from "../../util/canonical-json";

/**
 * Key values of every item this folder writes, exactly as store/table.ts lays them out, so
 * the layout is spelled once per item kind.
 */
export const CATALOG_PARTITION = "CATALOG";
const SPEC_SORT_KEY = "SPEC";

export const toolsetKey = (name: string) => ({ pk: `TOOLSET#${name}`, sk: SPEC_SORT_KEY });
export const toolsetIndexSortKey = (name: string) => `TOOLSET#${name}`;

/** A registered MCP toolset's held review: in the toolset's partition, never on gsi1. */
export const toolsetReviewKey = (name: string) => ({ pk: `TOOLSET#${name}`, sk: "REVIEW" });

export const toolKey = (id: string) => ({ pk: `TOOL#${id}`, sk: SPEC_SORT_KEY });
export const toolIndexSortKey = (toolset: string, id: string) => `TOOLSET#${toolset}#TOOL#${id}`;

export const callKey = (runId: string, callId: string) => ({
  pk: `RUN#${runId}`,
  sk: `CALL#${callId}`,
});
/** gsi3: a call under the trace it belongs to (TRACE#<traceId> / <scheduledAt>). */
export const traceIndexKey = (call: {
  scheduledAt: string;
  trace?: { traceId: string } | undefined;
}) => (call.trace ? { gsi3pk: `TRACE#${call.trace.traceId}`, gsi3sk: call.scheduledAt } : {});

/** The run and call an item's key names (callKey reversed). */
export const callOfKey = (item: Record<string, unknown>) => ({
  runId: String(item.pk).slice("RUN#".length),
  callId: String(item.sk).slice("CALL#".length),
});

/**
 * The partitions of the sparse in-flight index. A call carries gsi2pk / gsi2sk only while it
 * waits or runs (PENDING / <scheduledAt or release time>, RUNNING / <deadlineAt>, which a call
 * that ran keeps once finished until its result is logged), awaits approval (APPROVAL /
 * <expiresAt>) or finished without running and is not yet logged (UNANNOUNCED /
 * <completedAt>), so the index stays as small as the work in flight and the sweeper finds what
 * a crash left behind without a scan. The index is gsi4, keys only (store/table.ts): putting a
 * call on it, moving it along or taking it off writes its keys there, not a copy of the whole
 * item; its readers read the items by key (queryIndexed in ./indexed). The attributes keep the
 * name of gsi2, the index gsi4 replaced (whole items).
 */
export const RUNNING_PARTITION = "RUNNING";
export const PENDING_PARTITION = "PENDING";
export const UNANNOUNCED_PARTITION = "UNANNOUNCED";
/** Calls waiting for a person's approval, by when it expires. */
export const APPROVAL_PARTITION = "APPROVAL";

export const runPartition = (runId: string) => `RUN#${runId}`;
/**
 * A run's log: RUN#<runId> / LOG#<seq>, seq from 1 up with no gaps (see log-writer.ts), zero
 * padded so keys sort as numbers. An entry holds one event (its attributes at the top, the
 * detail as `detailJson` or `detailZ`), or several consecutive events of one call: keyed by the
 * first one's seq, the last one's in `last`, the events in `eventsJson` or `eventsZ`
 * (log-requests.ts); the seqs after its first up to its last are no item's key. A skip entry
 * (`skip: true`) holds none. Earlier versions keyed entries EVENT#<occurredAt>#<eventKey>;
 * those still on disk are read as the head of their run's log. Nothing else in a run's
 * partition may sort between the two prefixes: one Query reads both.
 *
 * Remove the EVENT# read (here and in event-log.ts's decodeCursor) after 2027-03-31. Only
 * versions before 2026-11-24 wrote such entries, before any stage ran on AWS, so only a local
 * table kept on disk by `npm start` (its state dir) can hold them; run logs have no TTL, so
 * they do not expire: the release that drops this read must say that a state dir from before
 * 2026-11-24 is to be deleted.
 */
const LEGACY_EVENT_PREFIX = "EVENT#";
export const LOG_PREFIX = "LOG#";
const SEQ_DIGITS = 16;
const paddedSeq = (seq: number) => String(seq).padStart(SEQ_DIGITS, "0");
export const logSortKey = (seq: number) => `${LOG_PREFIX}${paddedSeq(seq)}`;
/**
 * A Query's key condition for a run's whole log: earlier versions' entries, then the sequence;
 * or, given a sort key, the log from that key on.
 */
export const runLogKeyCondition = (runId: string, from = LEGACY_EVENT_PREFIX) => ({
  KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
  ExpressionAttributeValues: {
    ":pk": runPartition(runId),
    ":from": from,
    ":to": `${LOG_PREFIX}~`,
  },
});
/**
 * What the stage stream's event source lets through of the table's change stream (a Lambda
 * filter pattern): new run-log entries. Records it filters out are not billed; REMOVEs (no run
 * log expires) and the table's other items never reach the function (run-log-feed.ts).
 */
export const RUN_LOG_ENTRY_FILTER = {
  eventName: ["INSERT"],
  dynamodb: { Keys: { sk: { S: [{ prefix: LOG_PREFIX }] } } },
} as const;

/** The sequence number of a LOG# sort key; NaN for anything else. */
export const logSeqOf = (sortKey: string) =>
  /^LOG#\d{16}$/.test(sortKey) ? Number(sortKey.slice(LOG_PREFIX.length)) : Number.NaN;

/**
 * A reader's place in a run's log: the key of the last entry it read, and the last place it
 * has read, past that key's own when the entry holds several events.
 */
export interface LogPlace {
  key: string;
  end: number;
}

/** A place as a cursor keeps it: the entry's key, then `#<end>` where the entry holds several events. */
export const logPlaceKey = (place: LogPlace) =>
  place.end === logSeqOf(place.key) ? place.key : `${place.key}#${paddedSeq(place.end)}`;

/** The place a cursor's key names; undefined for anything else (a place in an EVENT# log). */
export function logPlaceOf(placeKey: string): LogPlace | undefined {
  const match = /^(LOG#\d{16})(?:#(\d{16}))?$/.exec(placeKey);
  if (!match?.[1]) return undefined;
  return { key: match[1], end: match[2] ? Number(match[2]) : logSeqOf(match[1]) };
}

export const apiKeyKey = (hash: string) => ({ pk: `KEY#${hash}`, sk: "KEY" });
export const KEYS_PARTITION = "KEYS";
export const keyIndexSortKey = (keyId: string) => `KEY#${keyId}`;

export const capabilityKey = (name: string) => ({ pk: `CAPABILITY#${name}`, sk: "STATUS" });
/**
 * Not in table.ts's list yet: capabilities also go on gsi1 (CAPABILITIES / <name>) so listing
 * them is one Query instead of a Scan of the whole table.
 */
export const CAPABILITIES_PARTITION = "CAPABILITIES";

/**
 * The stage's event stream (event-stream.ts): STREAM / HEAD names the newest partition (and,
 * written by earlier releases, a last place); events are kept in chunks, one item per commit,
 * STREAM#<place / 100,000> / C#<first place>, each holding the places first..last. A chunk never spans two partitions, so a range of
 * places is one Query per partition it spans.
 */
export const STREAM_HEAD_KEY = { pk: "STREAM", sk: "HEAD" };
export const STREAM_PARTITION_SIZE = 100_000;
export const streamPartition = (seq: number) => `STREAM#${Math.floor(seq / STREAM_PARTITION_SIZE)}`;
export const streamChunkKey = (firstSeq: number) => ({
  pk: streamPartition(firstSeq),
  sk: `C#${String(firstSeq).padStart(SEQ_DIGITS, "0")}`,
});

/**
 * A call's relay to its live caller (call-channel.ts), in a partition of its own beside the
 * call so nothing that reads a run's partition ever sees it: CHAN#<runId>#<callId> / CALLER
 * (who waits), REQ#<id> (a request for it), ANS#<id> (its answer), MSG#<time-sortable id> (a
 * message for it); every item expires (expiresAt). Run and call ids hold no `#`.
 */
export const channelPartition = (runId: string, callId: string) => `CHAN#${runId}#${callId}`;
export const channelCallerKey = (runId: string, callId: string) => ({
  pk: channelPartition(runId, callId),
  sk: "CALLER",
});
export const CHANNEL_REQUEST_PREFIX = "REQ#";
export const channelRequestKey = (runId: string, callId: string, requestId: string) => ({
  pk: channelPartition(runId, callId),
  sk: `${CHANNEL_REQUEST_PREFIX}${requestId}`,
});
export const CHANNEL_ANSWER_PREFIX = "ANS#";
export const channelAnswerKey = (runId: string, callId: string, requestId: string) => ({
  pk: channelPartition(runId, callId),
  sk: `${CHANNEL_ANSWER_PREFIX}${requestId}`,
});
/**
 * MSG#<15-digit epoch ms>#<6-digit count within the writer's millisecond>#<random>: sorts in
 * the order one writer wrote them, and by time across writers.
 */
export const CHANNEL_MESSAGE_PREFIX = "MSG#";
const MESSAGE_TIME_DIGITS = 15;
export const channelMessageSortKey = (atMs: number, count: number, unique: string) =>
  `${CHANNEL_MESSAGE_PREFIX}${String(atMs).padStart(MESSAGE_TIME_DIGITS, "0")}#${String(count).padStart(6, "0")}#${unique}`;
/** Sorts before every message written at `atMs` or later, after every earlier one. */
export const channelMessagesFrom = (atMs: number) =>
  `${CHANNEL_MESSAGE_PREFIX}${String(atMs).padStart(MESSAGE_TIME_DIGITS, "0")}#`;

/**
 * A caller's subscriptions to federated resources (mcp-subscriptions.ts): MCPSUB#<principal
 * id> / URI#<sha256 of the uri>, the uri itself an attribute (a sort key holds at most 1,024
 * bytes, a URI up to 2,048 characters); every item expires (expiresAt).
 */
export const mcpSubscriptionPartition = (principalId: string) => `MCPSUB#${principalId}`;
export const mcpSubscriptionKey = (principalId: string, uri: string) => ({
  pk: mcpSubscriptionPartition(principalId),
  sk: `URI#${sha256Hex(uri)}`,
});
