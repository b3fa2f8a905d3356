import {
  DeleteCommand,
  GetCommand,
  type NativeAttributeValue,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import type { Principal } from "@toolbus/wire/model/call";
import { CONNECTION_ITEM_PREFIX } from "../../connections/names";
import { TABLE } from "../table";
import { type DynamoStoreOptions, guard, isConditionFailure } from "./client";

type Item = Record<string, NativeAttributeValue>;

/*
 * Connected accounts in the stage's table. Every key starts with CONN, so the stack can deny
 * these items to every function that never acts for a person (dynamodb:LeadingKeys):
 * - connection  CONN#<principal id> / PROVIDER#<provider>   tokens sealed (envelope), the rest plain
 * - pending     CONNSTATE#<sha256 of state> / STATE          (expiresAt; taken once)
 * - ticket      CONNTICKET#<sha256 of ticket> / TICKET       (expiresAt)
 */
export const connectionKey = (principalId: string, provider: string) => ({
  pk: `${CONNECTION_ITEM_PREFIX}#${principalId}`,
  sk: `PROVIDER#${provider}`,
});

/** A stored connection: its tokens sealed, everything else readable. */
export interface StoredConnection {
  principalId: string;
  provider: string;
  status: "connected" | "expired";
  /** Why it expired, in words for a person. */
  reason?: string;
  scopes: string[];
  connectedAt: string;
  refreshedAt?: string;
  /** When the access token expires, ms since the epoch. */
  accessExpiresAt?: number;
  /** Incremented by every write: a refresh writes only over the version it read. */
  version: number;
  /** A refresh in progress until then (ms): others wait for its tokens instead of refreshing too. */
  refreshingUntil?: number;
  sealed: Uint8Array;
}

/** A connection started and not finished: single use, bound to the browser that started it. */
export interface PendingConnection {
  provider: string;
  principal: Principal;
  verifier: string;
  /** sha256 of the secret in the starting browser's cookie. */
  binding: string;
  scopes: string[];
  expiresAt: number;
}

/** A link handed out for a person to open: names whom the connection is for. */
export interface ConnectTicket {
  provider: string;
  principal: Principal;
  scopes: string[];
  expiresAt: number;
}

export class DynamoConnectionStore {
  constructor(private readonly options: DynamoStoreOptions) {}

  async get(principalId: string, provider: string): Promise<StoredConnection | undefined> {
    const { client, tableName } = this.options;
    const { Item } = await guard("connections.get", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: connectionKey(principalId, provider),
          ConsistentRead: true,
        }),
      ),
    );
    return Item ? connectionOf(Item) : undefined;
  }

  async list(principalId: string): Promise<StoredConnection[]> {
    const { client, tableName } = this.options;
    const { Items } = await guard("connections.list", tableName, () =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": `${CONNECTION_ITEM_PREFIX}#${principalId}` },
        }),
      ),
    );
    return (Items ?? []).map(connectionOf);
  }

  /** Everyone's connections, for admins: a scan of the CONN# items, at most `limit`. */
  async listAll(limit = 1000): Promise<StoredConnection[]> {
    const { client, tableName } = this.options;
    const found: StoredConnection[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await guard("connections.listAll", tableName, () =>
        client.send(
          new ScanCommand({
            TableName: tableName,
            FilterExpression: "begins_with(pk, :conn)",
            ExpressionAttributeValues: { ":conn": `${CONNECTION_ITEM_PREFIX}#` },
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        ),
      );
      found.push(...(page.Items ?? []).map(connectionOf));
      start = page.LastEvaluatedKey;
    } while (start && found.length < limit);
    return found.slice(0, limit);
  }

  /** Writes a connection made anew (a first connect or a reconnect): its version moves past any before. */
  async put(connection: Omit<StoredConnection, "version">): Promise<StoredConnection> {
    const { client, tableName } = this.options;
    const { Attributes } = await guard("connections.put", tableName, () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: connectionKey(connection.principalId, connection.provider),
          UpdateExpression:
            "SET principalId = :principal, provider = :provider, #status = :status, scopes = :scopes, connectedAt = :connectedAt, sealed = :sealed, version = if_not_exists(version, :zero) + :one" +
            (connection.accessExpiresAt === undefined ? "" : ", accessExpiresAt = :expires") +
            " REMOVE reason, refreshedAt, refreshingUntil" +
            (connection.accessExpiresAt === undefined ? ", accessExpiresAt" : ""),
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":principal": connection.principalId,
            ":provider": connection.provider,
            ":status": "connected",
            ":scopes": connection.scopes,
            ":connectedAt": connection.connectedAt,
            ":sealed": connection.sealed,
            ":zero": 0,
            ":one": 1,
            ...(connection.accessExpiresAt === undefined
              ? {}
              : { ":expires": connection.accessExpiresAt }),
          },
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    return connectionOf(Attributes ?? {});
  }

  /**
   * Takes the right to refresh a connection still at `version`, until `until` (ms): false when
   * it moved on or someone else holds it (their refresh is the one that counts).
   */
  async lease(principalId: string, provider: string, version: number, now: number, until: number) {
    const { client, tableName } = this.options;
    try {
      await guard("connections.lease", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: connectionKey(principalId, provider),
            UpdateExpression: "SET refreshingUntil = :until",
            ConditionExpression:
              "version = :version AND (attribute_not_exists(refreshingUntil) OR refreshingUntil < :now)",
            ExpressionAttributeValues: { ":until": until, ":version": version, ":now": now },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Stores refreshed tokens over `version`; false when it moved on meanwhile. */
  async rotate(
    principalId: string,
    provider: string,
    version: number,
    update: { sealed: Uint8Array; accessExpiresAt?: number; scopes: string[]; refreshedAt: string },
  ): Promise<boolean> {
    const { client, tableName } = this.options;
    try {
      await guard("connections.rotate", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: connectionKey(principalId, provider),
            UpdateExpression: `SET sealed = :sealed, scopes = :scopes, refreshedAt = :at, version = :next${
              update.accessExpiresAt === undefined ? "" : ", accessExpiresAt = :expires"
            } REMOVE refreshingUntil${update.accessExpiresAt === undefined ? ", accessExpiresAt" : ""}`,
            ConditionExpression: "version = :version",
            ExpressionAttributeValues: {
              ":sealed": update.sealed,
              ":scopes": update.scopes,
              ":at": update.refreshedAt,
              ":next": version + 1,
              ":version": version,
              ...(update.accessExpiresAt === undefined
                ? {}
                : { ":expires": update.accessExpiresAt }),
            },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Marks a connection expired, if still at `version`: a person must connect again. */
  async expire(principalId: string, provider: string, version: number, reason: string) {
    const { client, tableName } = this.options;
    try {
      await guard("connections.expire", tableName, () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: connectionKey(principalId, provider),
            UpdateExpression:
              "SET #status = :expired, reason = :reason, version = :next REMOVE refreshingUntil",
            ConditionExpression: "version = :version",
            ExpressionAttributeNames: { "#status": "status" },
            ExpressionAttributeValues: {
              ":expired": "expired",
              ":reason": reason,
              ":next": version + 1,
              ":version": version,
            },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Deletes a connection; what it held, for revoking at the provider. */
  async remove(principalId: string, provider: string): Promise<StoredConnection | undefined> {
    const { client, tableName } = this.options;
    const { Attributes } = await guard("connections.remove", tableName, () =>
      client.send(
        new DeleteCommand({
          TableName: tableName,
          Key: connectionKey(principalId, provider),
          ReturnValues: "ALL_OLD",
        }),
      ),
    );
    return Attributes ? connectionOf(Attributes) : undefined;
  }

  async putPending(stateHash: string, pending: PendingConnection): Promise<void> {
    await this.#putExpiring(
      `${CONNECTION_ITEM_PREFIX}STATE#${stateHash}`,
      "STATE",
      pending,
      pending.expiresAt,
    );
  }

  /** The pending connection of a state, deleted as it is read: a state works once. */
  async takePending(stateHash: string, now: number): Promise<PendingConnection | undefined> {
    const { client, tableName } = this.options;
    try {
      const { Attributes } = await guard("connections.takePending", tableName, () =>
        client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: { pk: `${CONNECTION_ITEM_PREFIX}STATE#${stateHash}`, sk: "STATE" },
            ConditionExpression: "attribute_exists(pk)",
            ReturnValues: "ALL_OLD",
          }),
        ),
      );
      const pending = Attributes?.value as PendingConnection | undefined;
      return pending && pending.expiresAt > now ? pending : undefined;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async putTicket(ticketHash: string, ticket: ConnectTicket): Promise<void> {
    await this.#putExpiring(
      `${CONNECTION_ITEM_PREFIX}TICKET#${ticketHash}`,
      "TICKET",
      ticket,
      ticket.expiresAt,
    );
  }

  async getTicket(ticketHash: string, now: number): Promise<ConnectTicket | undefined> {
    const { client, tableName } = this.options;
    const { Item } = await guard("connections.getTicket", tableName, () =>
      client.send(
        new GetCommand({
          TableName: tableName,
          Key: { pk: `${CONNECTION_ITEM_PREFIX}TICKET#${ticketHash}`, sk: "TICKET" },
          ConsistentRead: true,
        }),
      ),
    );
    const ticket = Item?.value as ConnectTicket | undefined;
    return ticket && ticket.expiresAt > now ? ticket : undefined;
  }

  async #putExpiring(pk: string, sk: string, value: object, expiresAt: number) {
    const { client, tableName } = this.options;
    await guard("connections.put", tableName, () =>
      client.send(
        new PutCommand({
          TableName: tableName,
          Item: { pk, sk, value, [TABLE.ttlAttribute]: Math.ceil(expiresAt / 1000) },
        }),
      ),
    );
  }
}

function connectionOf(item: Item): StoredConnection {
  return {
    principalId: String(item.principalId),
    provider: String(item.provider),
    status: item.status === "expired" ? "expired" : "connected",
    ...(typeof item.reason === "string" ? { reason: item.reason } : {}),
    scopes: Array.isArray(item.scopes) ? item.scopes.map(String) : [],
    connectedAt: String(item.connectedAt),
    ...(typeof item.refreshedAt === "string" ? { refreshedAt: item.refreshedAt } : {}),
    ...(typeof item.accessExpiresAt === "number" ? { accessExpiresAt: item.accessExpiresAt } : {}),
    ...(typeof item.refreshingUntil === "number" ? { refreshingUntil: item.refreshingUntil } : {}),
    version: Number(item.version ?? 0),
    sealed: item.sealed as Uint8Array,
  };
}
