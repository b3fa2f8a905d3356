import type { Deployment } from "../../deployment";
import { DynamoCallStore } from "./calls";
import { DynamoCapabilityStore } from "./capabilities";
import { DynamoCatalogStore } from "./catalog";
import { createDocumentClient, type DynamoStoreOptions } from "./client";
import { DynamoEventLog } from "./event-log";
import { DynamoKeyStore } from "./keys";

export { DynamoAuditLog } from "./audit";
export { DynamoCallStore } from "./calls";
export { DynamoCapabilityStore } from "./capabilities";
export { DynamoCatalogStore } from "./catalog";
export {
  createDocumentClient,
  type DynamoStoreOptions,
  isUnavailable,
  toStoreError,
} from "./client";
export {
  DEFAULT_EVENT_PAGE,
  DynamoEventLog,
  decodeCursor,
  encodeCursor,
  MAX_EVENT_PAGE,
} from "./event-log";
export { RUN_LOG_ENTRY_FILTER } from "./items";
export { DynamoKeyStore } from "./keys";
export { appendAsSoleWriter } from "./log-sole-writer";
export { DynamoRateLimiter } from "./rate-limiter";
export { cachedOutput, DynamoResultCache } from "./result-cache";
export { fitResult, MAX_STORED_RESULT_BYTES } from "./result-size";

export interface DynamoStores {
  catalog: DynamoCatalogStore;
  calls: DynamoCallStore;
  events: DynamoEventLog;
  keys: DynamoKeyStore;
  capabilities: DynamoCapabilityStore;
}

/** How every store of a deployment reaches its table. */
export function storeOptions(deployment: Deployment): DynamoStoreOptions {
  return {
    client: createDocumentClient(deployment.dynamodb),
    tableName: deployment.tableName,
    // The sole writer feeds the stage stream too: it keeps chunks as long as the stage says.
    ...(deployment.appendLog
      ? { appendLog: deployment.appendLog, stream: deployment.config.stream }
      : {}),
  };
}

/** Every store on one table, sharing one document client. */
export function dynamoStores(options: DynamoStoreOptions): DynamoStores {
  return {
    catalog: new DynamoCatalogStore(options),
    calls: new DynamoCallStore(options),
    events: new DynamoEventLog(options),
    keys: new DynamoKeyStore(options),
    capabilities: new DynamoCapabilityStore(options),
  };
}
