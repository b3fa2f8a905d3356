import { createHash } from "node:crypto";
import { type EventBridgeClient, PutEventsCommand } from "@aws-sdk/client-eventbridge";
import { SendMessageCommand, type SQSClient } from "@aws-sdk/client-sqs";
import type { Delivery, SubscriptionSecrets } from "@toolbus/wire/model/subscription";
import { webhookIdOf } from "@toolbus/wire/webhooks/signature";
import type { AttemptOutcome, DeliverySender } from "../app/subscriptions/fan-out";
import type { HttpClient } from "../outbound/types";
import { sendWebhook } from "./webhook-sender";

export interface TargetClients {
  http: HttpClient;
  /** Made on first use: a stage without bus or queue targets never builds them. */
  eventBridge: () => EventBridgeClient;
  sqs: () => SQSClient;
  now?: () => Date;
}

/** The secrets that sign now: the current one, and a rotated one until it expires. */
function signingSecrets(secrets: SubscriptionSecrets, now: Date): string[] {
  const previousValid =
    secrets.previous !== undefined &&
    secrets.previousUntil !== undefined &&
    Date.parse(secrets.previousUntil) > now.getTime();
  return previousValid && secrets.previous
    ? [secrets.current, secrets.previous]
    : [secrets.current];
}

/**
 * Sends a delivery to its target: a webhook signed the Standard Webhooks way (the event key
 * as `webhook-id`), an EventBridge bus (the event again, as Toolbus published it), or an SQS
 * queue (the body as the message, deduplicated by event key on FIFO queues).
 */
export function targetSender(clients: TargetClients): DeliverySender {
  const now = clients.now ?? (() => new Date());
  return async (target, delivery, secrets) => {
    if (target.kind === "webhook") {
      const at = now();
      const outcome = await sendWebhook(clients.http, {
        url: target.url,
        secrets: signingSecrets(secrets, at),
        id: webhookIdOf(delivery.eventKey),
        timestamp: Math.floor(at.getTime() / 1000),
        body: delivery.body,
        now: at.getTime(),
      });
      if (outcome.ok) return { ok: true, status: outcome.status };
      return {
        ok: false,
        retryable: outcome.retryable,
        ...(outcome.gone ? { gone: true } : {}),
        ...(outcome.status === undefined ? {} : { status: outcome.status }),
        ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
        message: outcome.responseExcerpt
          ? `${outcome.error}: ${outcome.responseExcerpt}`
          : outcome.error,
      };
    }
    if (target.kind === "eventbridge") return toBus(clients.eventBridge(), target.busArn, delivery);
    return toQueue(clients.sqs(), target.queueUrl, delivery);
  };
}

async function toBus(
  client: EventBridgeClient,
  busArn: string,
  delivery: Delivery,
): Promise<AttemptOutcome> {
  const { data, timestamp } = JSON.parse(delivery.body) as { data: unknown; timestamp: string };
  try {
    const answer = await client.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: busArn,
            Source: "toolbus",
            DetailType: delivery.detailType,
            Detail: JSON.stringify(data),
            Time: new Date(timestamp),
          },
        ],
      }),
    );
    const failed = answer.Entries?.[0];
    if ((answer.FailedEntryCount ?? 0) > 0) {
      return {
        ok: false,
        retryable: true,
        message:
          `the bus refused the event: ${failed?.ErrorCode ?? "unknown"} ${failed?.ErrorMessage ?? ""}`.trim(),
      };
    }
    return { ok: true };
  } catch (error) {
    return awsFailure(error);
  }
}

async function toQueue(
  client: SQSClient,
  queueUrl: string,
  delivery: Delivery,
): Promise<AttemptOutcome> {
  const fifo = queueUrl.endsWith(".fifo");
  try {
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: delivery.body,
        MessageAttributes: {
          "webhook-id": { DataType: "String", StringValue: webhookIdOf(delivery.eventKey) },
        },
        ...(fifo
          ? {
              MessageGroupId: delivery.subscriptionId,
              // Per subscription, event and replay: two of them never share one (SQS would
              // drop the second as a duplicate), and a long event key is never cut to collide.
              MessageDeduplicationId: createHash("sha256")
                .update(
                  `${delivery.subscriptionId}\n${delivery.eventKey}\n${delivery.replayId ?? ""}`,
                )
                .digest("hex"),
            }
          : {}),
      }),
    );
    return { ok: true };
  } catch (error) {
    return awsFailure(error);
  }
}

/** Denied or missing targets will not heal by themselves; throttling and outages may. */
function awsFailure(error: unknown): AttemptOutcome {
  const name = error instanceof Error ? error.name : "Error";
  const message = error instanceof Error ? error.message : String(error);
  const permanent = /AccessDenied|NotFound|NonExistent|InvalidParameter|ValidationException/.test(
    name,
  );
  return { ok: false, retryable: !permanent, message: `${name}: ${message}`.slice(0, 500) };
}
