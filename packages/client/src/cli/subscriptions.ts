import type { Delivery, Subscription, SubscriptionWithSecret } from "../schemas.js";
import { fields, table } from "./format.js";

/** `active`, `paused`, or `paused (failing)` when Toolbus paused it because deliveries failed. */
export function subscriptionStatus(subscription: Subscription): string {
  if (subscription.status !== "paused") return subscription.status;
  return subscription.pausedBecause === "failing" ? "paused (failing)" : "paused";
}

/** The target's kind and where it points, e.g. `webhook https://example.com/hook`. */
export function targetLabel(target: Subscription["target"]): string {
  switch (target.kind) {
    case "webhook":
      return `webhook ${target.url}`;
    case "eventbridge":
      return `eventbridge ${target.busArn}`;
    case "sqs":
      return `sqs ${target.queueUrl}`;
  }
}

export function subscriptionTable(subscriptions: readonly Subscription[]): string {
  return table(
    ["ID", "NAME", "STATUS", "TARGET", "FAILURE STREAK"],
    subscriptions.map((subscription) => [
      subscription.id,
      subscription.name,
      subscriptionStatus(subscription),
      targetLabel(subscription.target),
      String(subscription.failureStreak),
    ]),
  );
}

export function subscriptionFields(subscription: Subscription): string {
  return fields([
    ["Subscription", subscription.id],
    ["Name", subscription.name],
    ["Status", subscriptionStatus(subscription)],
    ["Target", targetLabel(subscription.target)],
    ["Pattern", subscription.pattern],
    ["Owner", `${subscription.owner.id} (${subscription.owner.role})`],
    ["Failure streak", String(subscription.failureStreak)],
    ["Created", subscription.createdAt],
    ["Updated", `${subscription.updatedAt} (revision ${subscription.revision})`],
  ]);
}

/**
 * A subscription with its signing secret, which the API shows only in this answer: printed
 * once, last, with a warning, so it is what a person copies.
 */
export function withSecret({ subscription, secret }: SubscriptionWithSecret, note: string): string {
  return `${subscriptionFields(subscription)}\n${fields([["Secret", secret]])}\n${note}\n`;
}

/** Longest LAST ERROR cell: the whole message is in --json. */
const ERROR_WIDTH = 100;

/** The last failure on one line: the HTTP status (when there was an answer) and the message. */
export function lastErrorLine(lastError: Delivery["lastError"]): string {
  if (!lastError) return "-";
  const message = lastError.message.replace(/\s+/g, " ").trim();
  const line = lastError.status === undefined ? message : `${lastError.status} ${message}`;
  return line.length > ERROR_WIDTH ? `${line.slice(0, ERROR_WIDTH - 3)}...` : line;
}

export function failuresTable(failures: readonly Delivery[]): string {
  return table(
    ["EVENT KEY", "TYPE", "ATTEMPTS", "LAST ERROR", "DEAD AT"],
    failures.map((delivery) => [
      delivery.eventKey,
      delivery.detailType,
      String(delivery.attempts),
      lastErrorLine(delivery.lastError),
      delivery.deadAt ?? "-",
    ]),
  );
}
