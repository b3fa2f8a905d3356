export { localDynamoDbClient } from "./client";
export { DynamoDbLocalStartError, JavaNotFoundError } from "./errors";
export type { DynamoDbLocal, KeepAliveOptions, StartDynamoDbLocalOptions } from "./launcher";
export { DEFAULT_JVM_OPTIONS, startDynamoDbLocal } from "./launcher";
