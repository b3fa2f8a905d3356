import type { Deployment } from "../deployment";
import type { RecorderDeps } from "../runtime/recorder";
import { DynamoEventLog } from "../store/dynamodb/event-log";
import { callsOf } from "./calls";
import { storeOf } from "./pieces";

/**
 * The recorder's dependencies: the run logs, and the calls it checks events against. Where
 * this process also wrote the call (`npm start`), the call store knows it without a read.
 */
export function recorderDeps(deployment: Deployment): RecorderDeps {
  const calls = callsOf(deployment);
  return {
    events: new DynamoEventLog(storeOf(deployment)),
    calls,
    recentCall: (runId, callId) => calls.recent(runId, callId),
    ...(deployment.log ? { log: deployment.log } : {}),
  };
}
