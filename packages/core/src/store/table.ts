import type { CreateTableCommandInput } from "@aws-sdk/client-dynamodb";

/**
 * The single table's key layout: one definition used by the local runtime, the tests and the
 * stacks. Items (pk / sk):
 * - toolset        TOOLSET#<name> / SPEC        gsi1: CATALOG / TOOLSET#<name>
 * - held review    TOOLSET#<name> / REVIEW      (a registered MCP server's changes, gzipped)
 * - tool           TOOL#<id> / SPEC             gsi1: CATALOG / TOOLSET#<toolset>#TOOL#<id>
 * - capability     CAPABILITY#<name> / STATUS
 * - call           RUN#<runId> / CALL#<callId>  gsi4 (while in flight): PENDING / <since>,
 *                                                 RUNNING / <deadlineAt>, APPROVAL / <expiresAt>,
 *                                                 UNANNOUNCED / <completedAt>
 *                                               gsi3: TRACE#<traceId> / <scheduledAt>
 * - run log entry  RUN#<runId> / LOG#<seq>    (EVENT#<occurredAt>#<eventKey> before 2026-11-24)
 *                                               one event, or several of one call keyed by the first
 * - cached result  CACHE#<toolId>#<version>#<hash> / RESULT    (expiresAt)
 * - rate window    RATE#<scope>#<window start> / COUNT         (expiresAt)
 * - API key        KEY#<sha256 of key> / KEY    gsi1: KEYS / KEY#<keyId>
 * - MCP task       TASKS#<principalId> / <createdAt>#<runId>#<callId>   (expiresAt; tasks/list)
 * - stage stream   STREAM / HEAD, and STREAM#<place / 100,000> / C#<first place>  (expiresAt)
 * - connection     CONN#<principalId> / PROVIDER#<provider>   (tokens sealed; connections/)
 * - connect state  CONNSTATE#<sha256 of state> / STATE, ticket CONNTICKET#<sha256> / TICKET (expiresAt)
 * - tool vector    EMBED#<model>#<sha256 of tool text> / VECTOR   (packed Float32; search.embeddings)
 * - delivery       SUBSCRIPTION#<id> / DELIVERY#<eventKey>   gsi4 (while a retry is due):
 *                                               DELIVERY_DUE / <nextAttemptAt>#…; dead: gsi1
 * gsi1 lists the catalog in toolset order with one query. gsi4 is sparse and finds the work a
 * crash or a failure left behind (calls stuck, waiting or unannounced, expired approvals,
 * deliveries due) without scanning. Its key attributes are still named gsi2pk / gsi2sk: it
 * replaced gsi2, an index on the same keys that copied whole items, so every write that put a
 * call on it, moved it along or took it off paid for a copy of the whole item. gsi4 holds keys
 * only; its readers query it and then read the items (queryIndexed in dynamodb/indexed.ts).
 * Deployed stages kept gsi2 for one release beside gsi4 (CloudFormation adds or drops one index
 * per table update) and dropped it the release after.
 * gsi3 finds a trace's calls; it holds keys only too, so the writes that move a call along
 * (claim, complete) never touch it.
 * The table's change stream carries new images: on AWS it feeds the stage stream's function
 * with the run-log entries as they are written (store/dynamodb/run-log-feed.ts). A local table
 * has it only when asked: under `npm start` nothing reads it (the process feeds its stage
 * stream itself), and DynamoDB Local would keep a day of records of every write in memory.
 */
export const TABLE = {
  partitionKey: "pk",
  sortKey: "sk",
  ttlAttribute: "expiresAt",
  stream: "NEW_IMAGE",
  indexes: [
    { name: "gsi1", partitionKey: "gsi1pk", sortKey: "gsi1sk", projection: "ALL" },
    { name: "gsi3", partitionKey: "gsi3pk", sortKey: "gsi3sk", projection: "KEYS_ONLY" },
    // Keys only, on gsi2's key attributes: the sparse index of work in flight.
    { name: "gsi4", partitionKey: "gsi2pk", sortKey: "gsi2sk", projection: "KEYS_ONLY" },
  ],
} as const;

export function createTableInput(
  tableName: string,
  { changeStream = false }: { changeStream?: boolean } = {},
): CreateTableCommandInput {
  // Indexes may share key attributes (gsi4 keeps gsi2's names): each is defined once.
  const keyNames = [
    ...new Set([
      TABLE.partitionKey,
      TABLE.sortKey,
      ...TABLE.indexes.flatMap((index) => [index.partitionKey, index.sortKey]),
    ]),
  ];
  return {
    TableName: tableName,
    BillingMode: "PAY_PER_REQUEST",
    AttributeDefinitions: keyNames.map((name) => ({ AttributeName: name, AttributeType: "S" })),
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: "HASH" },
      { AttributeName: TABLE.sortKey, KeyType: "RANGE" },
    ],
    GlobalSecondaryIndexes: TABLE.indexes.map(indexInput),
    ...(changeStream && {
      StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE.stream },
    }),
  };
}

type TableIndex = (typeof TABLE.indexes)[number];

/** One index as CreateTable and UpdateTable take it. */
export function indexInput(index: TableIndex) {
  return {
    IndexName: index.name,
    KeySchema: [
      { AttributeName: index.partitionKey, KeyType: "HASH" as const },
      { AttributeName: index.sortKey, KeyType: "RANGE" as const },
    ],
    Projection: { ProjectionType: index.projection },
  };
}
