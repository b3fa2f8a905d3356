import type { Deployment } from "../deployment";
import type { StreamWriterDeps } from "../runtime/stream";
import { DynamoEventStream } from "../store/dynamodb/event-stream";
import { runLogEntryEvents } from "../store/dynamodb/run-log-feed";
import { storeOf } from "./pieces";
import { verifyDeps } from "./recorder";

/**
 * The stage stream writer's dependencies: the stream, how the table's change records hold
 * run-log entries (what feeds it on AWS), and the recorder's check of events against their
 * calls (for events handed over one by one, as an SQS batch of an earlier release). Under
 * `npm start` no bus feeds it: the only writer of the table puts the stream's chunks with the
 * run-log entries (log-sole-writer.ts). A module of its own, so the API never carries the
 * stream's store.
 */
export function streamWriterDeps(deployment: Deployment): StreamWriterDeps {
  return {
    ...verifyDeps(deployment),
    stream: new DynamoEventStream(storeOf(deployment), deployment.config.stream),
    loggedEvents: runLogEntryEvents,
  };
}
