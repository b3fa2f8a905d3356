export { localDynamoDbClient } from "./client";
export { DynamoDbLocalStartError, JavaNotFoundError } from "./errors";
export type { DynamoDbLocal, StartDynamoDbLocalOptions } from "./launcher";
export { startDynamoDbLocal } from "./launcher";
