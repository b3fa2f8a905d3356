import { randomBytes } from "node:crypto";
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import {
  type AttachedCaller,
  type LogLevel,
  NO_SUCH_METHOD,
  type RelayAnswer,
  type RelayEvent,
  type RelayNotification,
} from "@toolbus/wire/model/relay";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { CallChannel, CallerAttachment, CallKey } from "../packages/core/src/ports";
import { memoryCallChannel } from "../packages/core/src/relay/memory-channel";
import { createDocumentClient } from "../packages/core/src/store/dynamodb";
import { DynamoCallChannel } from "../packages/core/src/store/dynamodb/call-channel";
import { callKey, channelPartition } from "../packages/core/src/store/dynamodb/items";
import { createToolbusTestTable, type TestTable, testDynamoDbClient } from "./support/dynamodb";

// The relay between a running call and its live caller behaves the same in memory (`npm start`)
// and through the stage's table (AWS): one suite, both implementations.

const client = testDynamoDbClient();
const documents = createDocumentClient(client);
let table: TestTable;

beforeAll(async () => {
  table = await createToolbusTestTable(client, "call-channel");
});

afterAll(async () => {
  await table?.drop();
  client.destroy();
});

const POLL_MS = 10;
const LEASE_SECONDS = 60;

const dynamoChannel = (settings: { now?: () => number; client?: DynamoDBDocumentClient } = {}) =>
  new DynamoCallChannel(
    { client: settings.client ?? documents, tableName: table.tableName },
    {
      pollMs: POLL_MS,
      leaseSeconds: LEASE_SECONDS,
      ...(settings.now ? { now: settings.now } : {}),
    },
  );

const freshKey = (): CallKey => ({
  parentRunId: `run-${randomBytes(6).toString("hex")}`,
  callId: "call-1",
});

const everything: AttachedCaller = {
  principalId: "alice",
  era: "legacy",
  capabilities: { elicitation: {}, sampling: {}, roots: {} },
  logLevel: "warning",
  progress: true,
};

const progress = (value: number): RelayNotification => ({ kind: "progress", progress: value });
const log = (level: LogLevel, data: unknown): RelayNotification => ({ kind: "log", level, data });
const note = (notification: RelayNotification): RelayEvent => ({
  type: "notification",
  notification,
});
const elicit = { method: "elicitation/create" as const, params: { message: "Which one?" } };
const accepted: RelayAnswer = { result: { action: "accept", content: { pick: 2 } } };

/** Reads an attachment's events in the background until stopped. */
function reader(attachment: CallerAttachment) {
  const controller = new AbortController();
  const seen: RelayEvent[] = [];
  const done = (async () => {
    for await (const event of attachment.events(controller.signal)) seen.push(event);
  })();
  return {
    seen,
    requests: () => seen.flatMap((event) => (event.type === "request" ? [event.request] : [])),
    async stop() {
      controller.abort();
      await done;
    },
  };
}

const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 5_000, interval: 5 });

/** Settles within `ms`, or is reported as still pending. */
async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<"pending" | T> {
  return Promise.race([
    promise,
    new Promise<"pending">((resolve) => setTimeout(() => resolve("pending"), ms)),
  ]);
}

describe.each([
  ["in memory", () => memoryCallChannel()],
  ["on DynamoDB", () => dynamoChannel()],
] as const)("CallChannel %s", (_name, makeChannel) => {
  it("passes a notification to an attached caller that wants it, and not to one that does not", async () => {
    const channel: CallChannel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    await channel.notify(key, progress(1));
    await channel.notify(key, log("info", "below its level"));
    await channel.notify(key, log("error", "at or above its level"));
    await waitFor(() => expect(events.seen).toHaveLength(2));
    expect(events.seen).toEqual([note(progress(1)), note(log("error", "at or above its level"))]);

    // No progress token, only errors and worse: a progress message and a warning are dropped.
    const quiet = freshKey();
    const quietAttachment = await channel.attach(quiet, {
      ...everything,
      progress: false,
      logLevel: "error",
    });
    const quietEvents = reader(quietAttachment);
    await channel.notify(quiet, progress(1));
    await channel.notify(quiet, log("warning", "dropped"));
    await channel.notify(quiet, log("critical", "marker"));
    await waitFor(() => expect(quietEvents.seen).toHaveLength(1));
    expect(quietEvents.seen).toEqual([note(log("critical", "marker"))]);

    await Promise.all([events.stop(), quietEvents.stop()]);
    await Promise.all([attachment.close({ gone: true }), quietAttachment.close({ gone: true })]);
  });

  it("drops a notification nobody waits for, and gives no log messages to a caller without a level", async () => {
    const channel = makeChannel();
    const key = freshKey();
    await channel.notify(key, progress(1));
    const { logLevel: _none, ...noLogs } = everything;
    const attachment = await channel.attach(key, noLogs);
    const events = reader(attachment);
    await channel.notify(key, log("emergency", "no level asked for"));
    await channel.notify(key, progress(2));
    await waitFor(() => expect(events.seen).toHaveLength(1));
    expect(events.seen).toEqual([note(progress(2))]);
    await events.stop();
    await attachment.close({ gone: true });
  });

  it("tells the runner who waits, if anyone", async () => {
    const channel = makeChannel();
    const key = freshKey();
    expect(await channel.caller(key)).toBeUndefined();
    const attachment = await channel.attach(key, everything);
    expect(await channel.caller(key)).toEqual(everything);
    await attachment.close({ gone: true });
    expect(await channel.caller(key)).toBeUndefined();
  });

  it("refuses a request at once when no caller waits", async () => {
    const channel = makeChannel();
    const answer = await channel.ask(freshKey(), elicit, new AbortController().signal);
    expect(answer).toEqual({ error: { code: NO_SUCH_METHOD, message: expect.any(String) } });
  });

  it("refuses a request at once when the caller did not take its capability", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, {
      ...everything,
      capabilities: { roots: {} },
    });
    const events = reader(attachment);
    const answer = await channel.ask(
      key,
      { method: "sampling/createMessage", params: {} },
      new AbortController().signal,
    );
    expect(answer).toEqual({ error: { code: NO_SUCH_METHOD, message: expect.any(String) } });
    // Nothing was passed on: a request the caller can take is the first one it sees.
    const roots = channel.ask(
      key,
      { method: "roots/list", params: {} },
      new AbortController().signal,
    );
    await waitFor(() => expect(events.requests()).toHaveLength(1));
    expect(events.requests()[0]?.method).toBe("roots/list");
    await channel.answer(key, events.requests()[0]?.id ?? "", "alice", { result: { roots: [] } });
    expect(await roots).toEqual({ result: { roots: [] } });
    await events.stop();
    await attachment.close({ gone: true });
  });

  it("passes a request to the caller and its answer back to the asker", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    const asked = channel.ask(key, elicit, new AbortController().signal);
    await waitFor(() => expect(events.requests()).toHaveLength(1));
    const [request] = events.requests();
    expect(request).toEqual({ id: expect.any(String), ...elicit });

    expect(await channel.answer(key, request?.id ?? "", "alice", accepted)).toBe(true);
    expect(await asked).toEqual(accepted);
    // Answered once: a second answer changes nothing, and the request is not passed on again.
    expect(await channel.answer(key, request?.id ?? "", "alice", { result: {} })).toBe(false);
    await events.stop();
    const again = await channel.attach(key, everything);
    const later = reader(again);
    await channel.notify(key, progress(9));
    await waitFor(() => expect(later.seen).toHaveLength(1));
    expect(later.seen).toEqual([note(progress(9))]);
    await later.stop();
    await again.close({ gone: true });
  });

  it("takes no answer from another principal or for an unknown request, and changes nothing", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    const asked = channel.ask(key, elicit, new AbortController().signal);
    await waitFor(() => expect(events.requests()).toHaveLength(1));
    const id = events.requests()[0]?.id ?? "";

    expect(await channel.answer(key, id, "mallory", { result: { action: "decline" } })).toBe(false);
    expect(await channel.answer(key, "no-such-request", "alice", accepted)).toBe(false);
    expect(await channel.answer(freshKey(), id, "alice", accepted)).toBe(false);
    expect(await settledWithin(asked, 100)).toBe("pending");

    expect(await channel.answer(key, id, "alice", accepted)).toBe(true);
    expect(await asked).toEqual(accepted);
    await events.stop();
    await attachment.close({ gone: true });
  });

  it("passes a request asked while the caller was away to the caller when it attaches again", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const first = await channel.attach(key, everything);
    const firstEvents = reader(first);
    await first.close({ gone: false });
    await firstEvents.stop();

    const asked = channel.ask(key, elicit, new AbortController().signal);
    expect(await settledWithin(asked, 50)).toBe("pending");
    const second = await channel.attach(key, { ...everything, era: "modern" });
    const secondEvents = reader(second);
    await waitFor(() => expect(secondEvents.requests()).toHaveLength(1));
    expect(firstEvents.requests()).toEqual([]);
    const id = secondEvents.requests()[0]?.id ?? "";
    expect(await channel.answer(key, id, "alice", accepted)).toBe(true);
    expect(await asked).toEqual(accepted);
    await secondEvents.stop();
    await second.close({ gone: true });
  });

  it("refuses a waiting request once its caller is gone for good", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    const asked = channel.ask(key, elicit, new AbortController().signal);
    await waitFor(() => expect(events.requests()).toHaveLength(1));
    const id = events.requests()[0]?.id ?? "";

    await attachment.close({ gone: true });
    await events.stop();
    expect(await asked).toEqual({ error: { code: -32603, message: expect.any(String) } });
    expect(await channel.answer(key, id, "alice", accepted)).toBe(false);
    expect(await channel.caller(key)).toBeUndefined();
    expect(await channel.ask(key, elicit, new AbortController().signal)).toEqual({
      error: { code: NO_SUCH_METHOD, message: expect.any(String) },
    });
  });

  it("leaves the caller of a newer attachment in place when an older one closes for good", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const older = await channel.attach(key, everything);
    const newer = await channel.attach(key, { ...everything, era: "modern" });
    await older.close({ gone: true });
    expect(await channel.caller(key)).toEqual({ ...everything, era: "modern" });
    await newer.close({ gone: true });
  });

  it("refuses another principal's caller while one waits, and keeps the first one's requests", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const owner = await channel.attach(key, everything);
    const asked = channel.ask(key, elicit, new AbortController().signal);
    const ownerReads = reader(owner);
    await waitFor(() => expect(ownerReads.requests()).toHaveLength(1));
    await expect(
      channel.attach(key, { ...everything, principalId: "key-of-someone-else" }),
    ).rejects.toThrow(/Another key waits/);
    // The owner is still the caller, and still the one who may answer.
    expect((await channel.caller(key))?.principalId).toBe(everything.principalId);
    const [request] = ownerReads.requests();
    expect(await channel.answer(key, request?.id ?? "", "key-of-someone-else", accepted)).toBe(
      false,
    );
    expect(await channel.answer(key, request?.id ?? "", everything.principalId, accepted)).toBe(
      true,
    );
    await expect(asked).resolves.toEqual(accepted);
    await ownerReads.stop();
    await owner.close({ gone: true });
  });

  it("rejects an aborted request with the signal's reason and no longer passes it on", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const controller = new AbortController();
    const aborted = channel.ask(key, elicit, controller.signal);
    // Let it be stored (and queued for the attachment) before it is given up on.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = new Error("the tool stopped");
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);

    const kept = channel.ask(
      key,
      { method: "roots/list", params: {} },
      new AbortController().signal,
    );
    const events = reader(attachment);
    await waitFor(() => expect(events.requests()).toHaveLength(1));
    expect(events.requests()[0]?.method).toBe("roots/list");
    const again = await channel.attach(key, everything);
    const later = reader(again);
    await waitFor(() => expect(later.requests()).toHaveLength(1));
    expect(later.requests()[0]?.method).toBe("roots/list");

    await channel.answer(key, later.requests()[0]?.id ?? "", "alice", { result: { roots: [] } });
    expect(await kept).toEqual({ result: { roots: [] } });
    await Promise.all([events.stop(), later.stop()]);
    await again.close({ gone: true });
  });

  it("stops yielding events once closed", async () => {
    const channel = makeChannel();
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    await channel.notify(key, progress(1));
    await waitFor(() => expect(events.seen).toHaveLength(1));
    await attachment.close({ gone: false });
    await events.stop();
    await channel.notify(key, progress(2));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events.seen).toEqual([note(progress(1))]);
  });
});

describe("DynamoCallChannel's items", () => {
  const query = async (pk: string) =>
    (
      await documents.send(
        new QueryCommand({
          TableName: table.tableName,
          KeyConditionExpression: "pk = :pk",
          ExpressionAttributeValues: { ":pk": pk },
          ConsistentRead: true,
        }),
      )
    ).Items ?? [];

  it("all expire, an answered request leaves at once, and none touches the call's own items", async () => {
    const channel = dynamoChannel();
    const key = freshKey();
    const call = {
      ...callKey(key.parentRunId, key.callId),
      status: "running",
      inputJson: "{}",
    };
    const logEntry = { pk: call.pk, sk: "LOG#0000000000000001", kind: "scheduled" };
    await documents.send(new PutCommand({ TableName: table.tableName, Item: call }));
    await documents.send(new PutCommand({ TableName: table.tableName, Item: logEntry }));

    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    await channel.notify(key, progress(1));
    const asked = channel.ask(key, elicit, new AbortController().signal);
    await waitFor(() => expect(events.requests()).toHaveLength(1));
    await channel.answer(key, events.requests()[0]?.id ?? "", "alice", accepted);
    await asked;
    await events.stop();
    await attachment.close({ gone: false });

    const items = await query(channelPartition(key.parentRunId, key.callId));
    // An answered request is gone at once (no poll reads it again); its answer expires.
    expect(items.map((item) => String(item.sk).split("#")[0]).sort()).toEqual([
      "ANS",
      "CALLER",
      "MSG",
    ]);
    // Minutes at most: the lease for the caller, requests and answers, two for messages.
    const nowSeconds = Date.now() / 1000;
    for (const item of items) {
      expect(item.expiresAt).toBeGreaterThan(nowSeconds);
      expect(item.expiresAt).toBeLessThanOrEqual(nowSeconds + Math.max(LEASE_SECONDS, 120) + 5);
    }
    expect(await query(call.pk)).toEqual([call, logEntry]);
  });

  it("reads a malformed or expired caller as nobody", async () => {
    const channel = dynamoChannel();
    const key = freshKey();
    const pk = channelPartition(key.parentRunId, key.callId);
    const put = (item: Record<string, unknown>) =>
      documents.send(
        new PutCommand({ TableName: table.tableName, Item: { pk, sk: "CALLER", ...item } }),
      );
    const later = Math.ceil(Date.now() / 1000) + 60;
    await put({ callerJson: JSON.stringify(everything), expiresAt: later });
    expect(await channel.caller(key)).toEqual(everything);
    await put({ callerJson: JSON.stringify({ ...everything, era: "future" }), expiresAt: later });
    expect(await channel.caller(key)).toBeUndefined();
    await put({ callerJson: "{not json", expiresAt: later });
    expect(await channel.caller(key)).toBeUndefined();
    await put({
      callerJson: JSON.stringify(everything),
      expiresAt: Math.floor(Date.now() / 1000) - 1,
    });
    expect(await channel.caller(key)).toBeUndefined();
    expect(await channel.ask(key, elicit, new AbortController().signal)).toEqual({
      error: { code: NO_SUCH_METHOD, message: expect.any(String) },
    });
  });

  it("refuses a waiting request once its caller's lease ran out without a word", async () => {
    let now = Date.now();
    const channel = dynamoChannel({ now: () => now });
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const asked = channel.ask(key, elicit, new AbortController().signal);
    expect(await settledWithin(asked, 50)).toBe("pending");
    now += (LEASE_SECONDS + 1) * 1000;
    expect(await settledWithin(asked, 2_000)).toEqual({
      error: { code: -32603, message: expect.any(String) },
    });
    // The request went with it.
    const items = await query(channelPartition(key.parentRunId, key.callId));
    expect(items.filter((item) => String(item.sk).startsWith("REQ#"))).toEqual([]);
    await attachment.close({ gone: true });
  });

  it("renews the lease of a caller that keeps reading", async () => {
    let now = Date.now();
    const channel = dynamoChannel({ now: () => now });
    const key = freshKey();
    const attachment = await channel.attach(key, everything);
    const events = reader(attachment);
    const callerKey = { pk: channelPartition(key.parentRunId, key.callId), sk: "CALLER" };
    const expiry = async () =>
      (await documents.send(new GetCommand({ TableName: table.tableName, Key: callerKey }))).Item
        ?.expiresAt as number;
    const first = await expiry();
    now += (LEASE_SECONDS / 2) * 1000;
    await waitFor(async () => expect(await expiry()).toBeGreaterThan(first));
    expect(await channel.caller(key)).toEqual(everything);
    await events.stop();
    await attachment.close({ gone: true });
  });

  it("writes a message only for a caller that wants it, looking the caller up at most once a second", async () => {
    const sent: string[] = [];
    const counting = {
      send: (command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        return documents.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
    let now = Date.now();
    const channel = dynamoChannel({ now: () => now, client: counting });
    const key = freshKey();
    await channel.attach(key, { ...everything, logLevel: "error" });
    sent.length = 0;
    await channel.notify(key, progress(1));
    await channel.notify(key, log("info", "dropped"));
    await channel.notify(key, progress(2));
    expect(sent).toEqual(["PutCommand", "PutCommand"]);
    now += 1_001;
    sent.length = 0;
    await channel.notify(key, log("warning", "dropped"));
    expect(sent).toEqual(["GetCommand"]);
  });
});
