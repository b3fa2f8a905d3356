import type { Deployment } from "../deployment";
import type { RecorderDeps, VerifyDeps } from "../runtime/recorder";
import { DynamoEventLog } from "../store/dynamodb/event-log";
import { callsOf } from "./calls";
import { storeOf } from "./pieces";

/**
 * What checking an event against its call record needs (the recorder's check, which the
 * stream writer shares): the calls, read strongly; where this process also wrote the call
 * (`npm start`), the call store knows it without a read.
 */
export function verifyDeps(deployment: Deployment): VerifyDeps {
  const calls = callsOf(deployment);
  return {
    calls,
    recentCall: (runId, callId) => calls.recent(runId, callId),
    ...(deployment.log ? { log: deployment.log } : {}),
  };
}

/** The recorder's dependencies: the run logs, and the check above. */
export function recorderDeps(deployment: Deployment): RecorderDeps {
  return { ...verifyDeps(deployment), events: new DynamoEventLog(storeOf(deployment)) };
}
