import * as z from "zod";
import { runId } from "../model/ids";
import { delivery, subscription, subscriptionRequest } from "../model/subscription";

/** `POST /v1/subscriptions`: the model's own request, as a caller sends it. */
export const subscriptionBody = subscriptionRequest;

export const subscriptionView = subscription.meta({ id: "Subscription" });
export const subscriptionListView = z.object({ subscriptions: z.array(subscriptionView) });

/** A new subscription, or one whose secret was rotated, with the signing secret shown once. */
export const subscriptionWithSecretView = z
  .object({
    subscription: subscriptionView,
    /** The signing secret (Standard Webhooks, `whsec_…`): shown here once, never again. */
    secret: z.string(),
  })
  .meta({ id: "SubscriptionWithSecret" });

export const failuresQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

/** A page of dead letters, newest first; `cursor` reads the next page, null at the end. */
export const failuresPageView = z.object({
  failures: z.array(delivery),
  cursor: z.string().nullable(),
});

export const redriveBody = z
  .strictObject({
    eventKeys: z
      .array(z.string().regex(/^[A-Za-z0-9._:/-]{1,300}$/, "an event key: <runId>/<callId>/<kind>"))
      .min(1)
      .max(100)
      .optional(),
  })
  .meta({ id: "Redrive" });

/** How many dead letters went back. */
export const redriveResultView = z.object({ redriven: z.number().int() });

const instant = z.iso.datetime({ offset: true });
export const replayBody = z
  .union([
    z.strictObject({ runId }),
    z.strictObject({
      from: instant.describe("Replay events the stage recorded at or after this time"),
      to: instant.optional().describe("... and at or before this time (default: now)"),
    }),
  ])
  .meta({ id: "Replay" });

/** A replay's id, how many of the events it read it queued, and whether it read them all. */
export const replayResultView = z.object({
  replayId: z.string(),
  queued: z.number().int(),
  events: z.number().int(),
  /** False when the replay stopped at its limit of events read (replay the rest later). */
  complete: z.boolean(),
});
