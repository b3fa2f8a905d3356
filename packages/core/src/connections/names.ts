// No imports: the stack reads these too.

/** The environment variable naming the KMS key connection tokens are sealed with (AWS). */
export const CONNECTIONS_KEY_VARIABLE = "TOOLBUS_CONNECTIONS_KEY";

/**
 * What every connection item's partition key starts with (connections, pending states,
 * tickets): the stack denies these items to every function that never acts for a person.
 */
export const CONNECTION_ITEM_PREFIX = "CONN";
