export { localDynamoDbClient } from "./client";
export { DynamoDbLocalStartError, JavaNotFoundError } from "./errors";
export type { DynamoDbLocal, KeepAliveOptions, StartDynamoDbLocalOptions } from "./launcher";
export { startDynamoDbLocal } from "./launcher";
