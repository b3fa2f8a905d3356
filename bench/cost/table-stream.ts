import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  type _Record,
  type AttributeValue,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type Shard,
  type ShardIteratorType,
  TrimmedDataAccessException,
} from "@aws-sdk/client-dynamodb-streams";
import { RUN_LOG_ENTRY_FILTER } from "@toolbus/core/store/dynamodb";
import { compilePattern } from "@toolbus/pattern";

/** What the table's stream and its Lambda event source did. */
export interface TableStreamCounts {
  /** Invocations of the consumer (one per batch, retries included). */
  invocations: number;
  /** Batches handed over successfully, and the records in them. */
  batches: number;
  records: number;
  /** GetRecords calls of the poller: not billed (Lambda reads a DynamoDB stream for nothing). */
  getRecords: number;
  /** Change records the stream returned, and those the event source's filter dropped (not billed). */
  recordsSeen: number;
  filteredOut: number;
  /** Invocations that failed and were retried with the same batch. */
  retries: number;
  /** Records of batches given up on after MAX_ATTEMPTS failed invocations. */
  discarded: number;
}

export const emptyTableStreamCounts = (): TableStreamCounts => ({
  invocations: 0,
  batches: 0,
  records: 0,
  getRecords: 0,
  recordsSeen: 0,
  filteredOut: 0,
  retries: 0,
  discarded: 0,
});

/** Lambda's DynamoDB Streams record, as its JSON event carries it (binary values base64). */
export interface LambdaStreamRecord {
  eventID: string;
  eventName: string;
  eventVersion: string;
  eventSource: "aws:dynamodb";
  awsRegion: string;
  dynamodb: {
    ApproximateCreationDateTime?: number;
    Keys?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber?: string;
    SizeBytes?: number;
    StreamViewType?: string;
  };
  eventSourceARN: string;
  userIdentity?: { type?: string; principalId?: string };
}

/** One attribute value in the JSON form Lambda hands over: bytes as base64 strings. */
function jsonValue(value: AttributeValue): unknown {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString("base64") };
  if (value.BS !== undefined) {
    return { BS: value.BS.map((item) => Buffer.from(item).toString("base64")) };
  }
  if (value.L !== undefined) return { L: value.L.map(jsonValue) };
  if (value.M !== undefined) return { M: jsonImage(value.M) };
  const { $unknown: _, ...known } = value as AttributeValue & { $unknown?: unknown };
  return known;
}

function jsonImage(image: Record<string, AttributeValue>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, jsonValue(value)]));
}

/**
 * A record as the SDK's GetRecords returns it, turned into the record of the event Lambda's
 * DynamoDB Streams event source hands a function: attribute values in DynamoDB JSON with
 * binary ones base64-encoded, the creation time in seconds, the stream's ARN and region.
 */
export function lambdaStreamRecord(
  record: _Record,
  eventSourceARN: string,
  awsRegion = "us-east-1",
): LambdaStreamRecord {
  const change = record.dynamodb ?? {};
  const created = change.ApproximateCreationDateTime;
  return {
    eventID: record.eventID ?? "",
    eventName: record.eventName ?? "",
    eventVersion: "1.1",
    eventSource: "aws:dynamodb",
    awsRegion,
    dynamodb: {
      ...(created !== undefined
        ? { ApproximateCreationDateTime: Math.floor(new Date(created).getTime() / 1000) }
        : {}),
      ...(change.Keys ? { Keys: jsonImage(change.Keys) } : {}),
      ...(change.NewImage ? { NewImage: jsonImage(change.NewImage) } : {}),
      ...(change.OldImage ? { OldImage: jsonImage(change.OldImage) } : {}),
      ...(change.SequenceNumber !== undefined ? { SequenceNumber: change.SequenceNumber } : {}),
      ...(change.SizeBytes !== undefined ? { SizeBytes: change.SizeBytes } : {}),
      ...(change.StreamViewType !== undefined ? { StreamViewType: change.StreamViewType } : {}),
    },
    eventSourceARN,
    ...(record.userIdentity
      ? {
          userIdentity: {
            ...(record.userIdentity.Type ? { type: record.userIdentity.Type } : {}),
            ...(record.userIdentity.PrincipalId
              ? { principalId: record.userIdentity.PrincipalId }
              : {}),
          },
        }
      : {}),
  };
}

/** The event source's batch size (records per invocation). */
const BATCH_SIZE = 100;
/** Invocations of one batch before it is given up on (Lambda's retry attempts, plus one). */
const MAX_ATTEMPTS = 5;

interface ShardState {
  id: string;
  iterator: string | undefined;
  /** The start of this shard's last GetRecords round that found nothing and left nothing to do. */
  quietAt: number;
  done: boolean;
}

export interface TableStreamOptions {
  dynamodb: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  tableName: string;
  /** The consumer: the stream function's invocation with Lambda's event. */
  consume: (event: { Records: LambdaStreamRecord[] }) => Promise<{ error?: unknown }>;
  /**
   * Milliseconds between a shard's GetRecords rounds once one found nothing: Lambda's pace
   * (about four a second) by default, so the poller barely competes with the measured call
   * for DynamoDB Local; `settled()` starts a round at once.
   */
  pollMs?: number;
  region?: string;
}

/**
 * Lambda's event source mapping of a DynamoDB stream, over DynamoDB Local's real stream of the
 * table (NEW_IMAGE). The model:
 * - at start, the table's latest stream is described and each open shard read from LATEST:
 *   what was written before the mapping existed is not handed over. A shard found later (a
 *   closed shard's child, or one opened since) is read from its start, once its parent is done;
 * - each shard is polled with GetRecords in a loop, about four times a second as Lambda does
 *   and at once when someone waits for it to settle (not billed: Lambda's reads of a DynamoDB
 *   stream are free); each record is turned into Lambda's record shape and the event source's
 *   filter (RUN_LOG_ENTRY_FILTER, with the bus's own pattern matcher) applied: what it drops is
 *   neither handed over nor billed;
 * - the matching records are handed over in batches of up to 100, one batch at a time per
 *   shard, in the shard's order; a failed invocation is retried with the same batch, up to
 *   MAX_ATTEMPTS invocations, then the batch is given up on (counted as discarded).
 */
export class TableStream {
  counts: TableStreamCounts = emptyTableStreamCounts();
  private readonly filter = compilePattern(RUN_LOG_ENTRY_FILTER);
  private readonly shards = new Map<string, ShardState>();
  private streamArn = "";
  private running = false;
  private readonly stopping = new AbortController();
  /** Shard loops waiting for their next round, woken early by `settled()` and `stop()`. */
  private readonly napping = new Set<() => void>();
  /** Times woken: a loop woken during its round (not napping) starts the next one at once. */
  private wakes = 0;
  private loops: Promise<void>[] = [];
  private inFlight = 0;
  private waiters: Array<{ since: number; resolve: () => void; reject: (e: unknown) => void }> = [];
  private failure: unknown;

  constructor(private readonly options: TableStreamOptions) {}

  /** Finds the table's stream and starts polling its open shards from their latest record. */
  async start(): Promise<void> {
    const { Table } = await this.options.dynamodb.send(
      new DescribeTableCommand({ TableName: this.options.tableName }),
    );
    if (!Table?.LatestStreamArn) {
      throw new Error(`Table ${this.options.tableName} has no stream: is StreamSpecification on?`);
    }
    this.streamArn = Table.LatestStreamArn;
    this.running = true;
    for (const shard of await this.describeShards()) {
      // A shard closed before the start holds only what was written before it.
      if (shard.SequenceNumberRange?.EndingSequenceNumber !== undefined) continue;
      await this.follow(shard, "LATEST");
    }
    // Shards opened later are looked for as they would be by Lambda's periodic describe.
    this.loops.push(this.discover());
  }

  /** True while every shard's last round found nothing new and no batch is in flight. */
  get idle(): boolean {
    if (this.inFlight > 0) return false;
    const live = [...this.shards.values()].filter((shard) => !shard.done);
    return live.every((shard) => shard.quietAt > Number.NEGATIVE_INFINITY);
  }

  /**
   * Resolves once every record written before the call has been handed over and processed:
   * every live shard has since made a GetRecords round that started after the call, found
   * nothing and left no batch to hand over.
   */
  settled(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const since = performance.now();
    if ([...this.shards.values()].every((shard) => shard.done)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ since, resolve, reject });
      // Whoever waits has no need to wait out the poll interval: a round starts now.
      this.wake();
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.wake();
    await Promise.allSettled(this.loops);
  }

  private async describeShards(): Promise<Shard[]> {
    const shards: Shard[] = [];
    let start: string | undefined;
    do {
      const { StreamDescription } = await this.options.streams.send(
        new DescribeStreamCommand({
          StreamArn: this.streamArn,
          ...(start ? { ExclusiveStartShardId: start } : {}),
        }),
      );
      shards.push(...(StreamDescription?.Shards ?? []));
      start = StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return shards;
  }

  private async follow(shard: Shard, type: ShardIteratorType): Promise<void> {
    const id = shard.ShardId;
    if (!id || this.shards.has(id)) return;
    const state: ShardState = {
      id,
      iterator: undefined,
      quietAt: Number.NEGATIVE_INFINITY,
      done: false,
    };
    this.shards.set(id, state);
    const parent = shard.ParentShardId ? this.shards.get(shard.ParentShardId) : undefined;
    const ready = async () => {
      // A child is read only once its parent's records are all handed over (Lambda's order).
      while (parent && !parent.done && this.running) await this.nap();
      const { ShardIterator } = await this.options.streams.send(
        new GetShardIteratorCommand({
          StreamArn: this.streamArn,
          ShardId: id,
          ShardIteratorType: type,
        }),
      );
      state.iterator = ShardIterator;
    };
    if (parent) this.loops.push(ready().then(() => this.poll(state)));
    else {
      await ready();
      this.loops.push(this.poll(state));
    }
  }

  private get pollMs(): number {
    return this.options.pollMs ?? 250;
  }

  private async discover(): Promise<void> {
    while (this.running) {
      await sleep(1_000, undefined, { signal: this.stopping.signal }).catch(() => {});
      if (!this.running) return;
      try {
        for (const shard of await this.describeShards()) {
          if (shard.ShardId && !this.shards.has(shard.ShardId)) {
            await this.follow(shard, "TRIM_HORIZON");
          }
        }
      } catch (error) {
        this.fail(error);
        return;
      }
    }
  }

  private async poll(shard: ShardState): Promise<void> {
    try {
      while (this.running && shard.iterator) {
        const round = performance.now();
        const wakes = this.wakes;
        let page: GetRecordsCommandOutput;
        try {
          page = await this.getRecords(shard.iterator);
        } catch (error) {
          if (!(error instanceof ExpiredIteratorException)) throw error;
          // An iterator unused for 15 minutes expires; not expected here.
          throw new Error(`Shard ${shard.id}: its iterator expired`);
        }
        const records = (page.Records ?? []).map((record) =>
          lambdaStreamRecord(record, this.streamArn, this.options.region),
        );
        this.counts.recordsSeen += records.length;
        const matching = records.filter((record) => this.filter.matches(record));
        this.counts.filteredOut += records.length - matching.length;
        for (let at = 0; at < matching.length; at += BATCH_SIZE) {
          await this.handOver(matching.slice(at, at + BATCH_SIZE));
        }
        shard.iterator = page.NextShardIterator;
        if (!shard.iterator) {
          // The shard closed and all of it is handed over: its children follow it.
          const children = (await this.describeShards()).filter(
            (each) => each.ParentShardId === shard.id,
          );
          for (const child of children) await this.follow(child, "TRIM_HORIZON");
          shard.done = true;
          this.notify();
          return;
        }
        shard.quietAt = records.length === 0 ? round : Number.NEGATIVE_INFINITY;
        this.notify();
        if (records.length === 0 && wakes === this.wakes) await this.nap();
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private async getRecords(iterator: string): Promise<GetRecordsCommandOutput> {
    this.counts.getRecords += 1;
    try {
      return await this.options.streams.send(
        new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }),
      );
    } catch (error) {
      if (error instanceof TrimmedDataAccessException) {
        throw new Error("The stream trimmed records before they were read");
      }
      throw error;
    }
  }

  private async handOver(batch: LambdaStreamRecord[]): Promise<void> {
    this.inFlight += 1;
    try {
      for (let attempt = 1; ; attempt++) {
        this.counts.invocations += 1;
        const result = await this.options.consume({ Records: batch });
        if (!result.error) {
          this.counts.batches += 1;
          this.counts.records += batch.length;
          return;
        }
        if (attempt >= MAX_ATTEMPTS) {
          this.counts.discarded += batch.length;
          return;
        }
        this.counts.retries += 1;
      }
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Waits out the poll interval, or until woken. */
  private nap(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.napping.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.pollMs);
      this.napping.add(done);
    });
  }

  private wake(): void {
    this.wakes += 1;
    for (const done of [...this.napping]) done();
  }

  private notify(): void {
    if (this.inFlight > 0) return;
    const live = [...this.shards.values()].filter((shard) => !shard.done);
    const quietSince = Math.min(...live.map((shard) => shard.quietAt));
    this.waiters = this.waiters.filter((waiter) => {
      if (quietSince < waiter.since) return true;
      waiter.resolve();
      return false;
    });
  }

  private fail(error: unknown): void {
    this.failure = error;
    this.running = false;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }
}
