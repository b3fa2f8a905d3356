import type { Deployment } from "../deployment";
import { EventPublisher } from "../events/publisher";
import { createDocumentClient, DynamoCallStore, DynamoEventLog } from "../store/dynamodb";
import type { ToolRuntimeDeps } from "./tool-handler";

/** What one tool's handler needs, and nothing more: a Lambda bundle stays small. */
export function toolRuntimeDeps(deployment: Deployment): ToolRuntimeDeps {
  return {
    calls: new DynamoCallStore({
      client: createDocumentClient(deployment.dynamodb),
      tableName: deployment.tableName,
    }),
    publisher: new EventPublisher({ client: deployment.eventBridge, busName: deployment.busName }),
    config: deployment.config,
  };
}

export function recorderDeps(deployment: Deployment) {
  return {
    events: new DynamoEventLog({
      client: createDocumentClient(deployment.dynamodb),
      tableName: deployment.tableName,
    }),
  };
}
