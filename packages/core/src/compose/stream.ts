import type { Deployment } from "../deployment";
import type { StreamWriterDeps } from "../runtime/stream";
import { DynamoEventStream } from "../store/dynamodb/event-stream";
import { storeOf } from "./pieces";
import { verifyDeps } from "./recorder";

/**
 * The stage stream writer's dependencies: the stream, and the recorder's check of events
 * against their calls. A module of its own, so the API never carries the stream's store.
 */
export function streamWriterDeps(deployment: Deployment): StreamWriterDeps {
  return {
    ...verifyDeps(deployment),
    stream: new DynamoEventStream(storeOf(deployment), deployment.config.stream),
  };
}
