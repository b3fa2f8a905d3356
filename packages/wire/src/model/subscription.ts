import * as z from "zod";
import { principal } from "./call";
import { label } from "./text";

/** `sub_` and 24 hex digits: made by Toolbus, never chosen by a caller. */
export const subscriptionId = z
  .string()
  .regex(/^sub_[0-9a-f]{24}$/, "a subscription id: sub_ and 24 hex digits");

/** EventBridge's own ARN shapes; the stage's allow-list decides which may be targets. */
const busArn = z
  .string()
  .regex(
    /^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._\-/]{1,256}$/,
    "an EventBridge bus ARN",
  );
const queueUrl = z
  .string()
  .regex(
    /^https:\/\/sqs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?\/\d{12}\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/,
    "an SQS queue URL",
  );

export const subscriptionTarget = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("webhook"),
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      // Credentials in a URL end up in logs and failure views; a receiver checks the signature.
      .refine((url) => !/^[a-z]+:\/\/[^/?#]*@/i.test(url), "no user or password in the URL"),
  }),
  z.strictObject({ kind: z.literal("eventbridge"), busArn }),
  z.strictObject({ kind: z.literal("sqs"), queueUrl }),
]);
export type SubscriptionTarget = z.infer<typeof subscriptionTarget>;

/** What a caller sends to create a subscription. */
export const subscriptionRequest = z.strictObject({
  name: label(128),
  /** An EventBridge event pattern over Toolbus's events, as JSON (object or its text). */
  pattern: z.union([z.record(z.string(), z.unknown()), z.string().max(4096)]),
  target: subscriptionTarget,
});
export type SubscriptionRequest = z.infer<typeof subscriptionRequest>;

const subscriptionStatus = z.enum(["active", "paused"]);

export const subscription = z.object({
  id: subscriptionId,
  name: z.string(),
  owner: principal,
  /** The pattern as canonical JSON text (what was validated is what is matched). */
  pattern: z.string(),
  target: subscriptionTarget,
  status: subscriptionStatus,
  /** Why it is paused: asked to, or failing (see `failureStreak`). */
  pausedBecause: z.enum(["requested", "failing"]).optional(),
  /** Failed delivery attempts in a row; any success resets it. */
  failureStreak: z.number().int().min(0),
  createdAt: z.string(),
  updatedAt: z.string(),
  revision: z.number().int().min(1),
});
export type Subscription = z.infer<typeof subscription>;

/** The signing secrets: the current one, and the one it replaced until that one expires. */
export const subscriptionSecrets = z.object({
  current: z.string(),
  previous: z.string().optional(),
  previousUntil: z.string().optional(),
});
export type SubscriptionSecrets = z.infer<typeof subscriptionSecrets>;

const deliveryStatus = z.enum(["pending", "delivered", "dead"]);

/** One event on its way to one subscription. */
export const delivery = z.object({
  subscriptionId,
  /** The event's key: the webhook-id, so a receiver dedupes retries and redrives. */
  eventKey: z.string(),
  detailType: z.string(),
  status: deliveryStatus,
  /** The body sent: `{ type, timestamp, data }` as JSON text, the same bytes every attempt. */
  body: z.string(),
  attempts: z.number().int().min(0),
  firstAttemptAt: z.string(),
  nextAttemptAt: z.string().optional(),
  /** The last failure: an HTTP status or an outbound error, and an excerpt of the answer. */
  lastError: z
    .object({ at: z.string(), status: z.number().int().optional(), message: z.string() })
    .optional(),
  deliveredAt: z.string().optional(),
  deadAt: z.string().optional(),
  /** Set on a delivery made by a replay: one replay's deliveries never collide with another's. */
  replayId: z.string().optional(),
});
export type Delivery = z.infer<typeof delivery>;
