import { SQSClient } from "@aws-sdk/client-sqs";
import type { SubscriptionFanOutDeps } from "../app/subscriptions/fan-out";
import { busClient } from "../bus-client";
import type { Deployment } from "../deployment";
import { createHttpClient } from "../outbound/client";
import { SDK_CLIENT_OPTIONS } from "../sdk-options";
import { DynamoDeliveryStore, DynamoSubscriptionStore } from "../store/dynamodb/subscriptions";
import { targetSender } from "../subscriptions/targets";
import { storeOf } from "./pieces";

/**
 * The subscriptions fan-out's dependencies: its stores, and a sender for every kind of
 * target. A module of its own, so only the fan-out's functions carry the SQS client.
 */
export function subscriptionDeps(deployment: Deployment): SubscriptionFanOutDeps {
  const store = storeOf(deployment);
  let sqs: SQSClient | undefined;
  return {
    subscriptions: new DynamoSubscriptionStore(store),
    deliveries: new DynamoDeliveryStore(store),
    send: targetSender({
      http: createHttpClient(deployment.config.outbound),
      eventBridge: () => busClient(deployment),
      sqs: () => {
        sqs ??= new SQSClient(SDK_CLIENT_OPTIONS);
        return sqs;
      },
    }),
    config: deployment.config,
    ...(deployment.log ? { log: deployment.log } : {}),
  };
}
