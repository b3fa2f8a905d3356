import type { Deployment } from "../deployment";
import type { StreamWriterDeps } from "../runtime/stream";
import { DynamoEventStream } from "../store/dynamodb/event-stream";
import { runLogEntryEvents } from "../store/dynamodb/run-log-feed";
import { storeOf } from "./pieces";
import { verifyDeps } from "./recorder";

/**
 * The stage stream writer's dependencies: the stream, how the table's change records hold
 * run-log entries (what feeds it on AWS), and the recorder's check of events against their
 * calls (what the local bus feeds it). A module of its own, so the API never carries the
 * stream's store.
 */
export function streamWriterDeps(deployment: Deployment): StreamWriterDeps {
  return {
    ...verifyDeps(deployment),
    stream: new DynamoEventStream(storeOf(deployment), deployment.config.stream),
    loggedEvents: runLogEntryEvents,
  };
}
