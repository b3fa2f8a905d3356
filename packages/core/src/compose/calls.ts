import type { Deployment } from "../deployment";
import { DynamoCallRuns } from "../store/dynamodb/call-runs";
import { DynamoCallStore } from "../store/dynamodb/calls";
import { shared, storeOf } from "./pieces";

/** The deployment's call store, shared by every unit in this process. */
export const callsOf = (deployment: Deployment): DynamoCallStore =>
  shared(deployment, "calls", () => new DynamoCallStore(storeOf(deployment)));

/**
 * What a tool's own function runs calls with: read, claim, complete (DynamoCallRuns), so its
 * bundle carries none of the store's listing and deciding. Where the API's store is at hand
 * (`npm start`, tests), running a call uses that one instead (`toolDeps`' `calls`).
 */
export const callRunsOf = (deployment: Deployment): DynamoCallRuns =>
  shared(deployment, "call-runs", () => new DynamoCallRuns(storeOf(deployment)));
