import type { Deployment } from "../deployment";
import type { StreamWriterDeps } from "../runtime/stream";
import { DynamoEventStream } from "../store/dynamodb/event-stream";
import { callsOf } from "./calls";
import { storeOf } from "./pieces";

/**
 * The stage stream writer's dependencies: the stream, and the calls it checks events against
 * (the recorder's check). A module of its own, so the API never carries the stream's store.
 */
export function streamWriterDeps(deployment: Deployment): StreamWriterDeps {
  const calls = callsOf(deployment);
  return {
    stream: new DynamoEventStream(storeOf(deployment), deployment.config.stream),
    calls,
    recentCall: (runId, callId) => calls.recent(runId, callId),
    ...(deployment.log ? { log: deployment.log } : {}),
  };
}
