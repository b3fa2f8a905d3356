import { SQSClient } from "@aws-sdk/client-sqs";
import type { SubscriptionDispatcherDeps } from "../app/subscriptions/dispatcher";
import { busClient } from "../bus-client";
import type { Deployment } from "../deployment";
import { createHttpClient } from "../outbound/client";
import { SDK_CLIENT_OPTIONS } from "../sdk-options";
import { storeOptions } from "../store/dynamodb";
import { DynamoDeliveryStore, DynamoSubscriptionStore } from "../store/dynamodb/subscriptions";
import { targetSender } from "../subscriptions/targets";

/**
 * The subscriptions dispatcher's dependencies: its stores, and a sender for every kind of
 * target. A module of its own, so only the dispatcher's function carries the SQS client.
 */
export function subscriptionDeps(deployment: Deployment): SubscriptionDispatcherDeps {
  const options = storeOptions(deployment);
  let sqs: SQSClient | undefined;
  return {
    subscriptions: new DynamoSubscriptionStore(options),
    deliveries: new DynamoDeliveryStore(options),
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
