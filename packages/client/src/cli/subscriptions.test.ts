import { describe, expect, it } from "vitest";
import type { Subscription } from "../schemas.js";
import {
  lastErrorLine,
  subscriptionStatus,
  subscriptionTable,
  targetLabel,
} from "./subscriptions.js";

function subscription(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: "sub_0123456789abcdef01234567",
    name: "results",
    owner: { id: "key-1", role: "member" },
    pattern: '{"source":["toolbus"]}',
    target: { kind: "webhook", url: "https://example.com/hook" },
    status: "active",
    failureStreak: 0,
    createdAt: "2026-11-24T10:00:00.000Z",
    updatedAt: "2026-11-24T10:00:00.000Z",
    revision: 1,
    ...overrides,
  };
}

describe("subscriptionStatus", () => {
  it("tells a subscription paused for failing from one paused on request", () => {
    expect(subscriptionStatus(subscription())).toBe("active");
    expect(subscriptionStatus(subscription({ status: "paused", pausedBecause: "requested" }))).toBe(
      "paused",
    );
    expect(subscriptionStatus(subscription({ status: "paused", pausedBecause: "failing" }))).toBe(
      "paused (failing)",
    );
  });
});

describe("targetLabel", () => {
  it("names each kind of target with where it points", () => {
    expect(targetLabel({ kind: "webhook", url: "https://x.test/h" })).toBe(
      "webhook https://x.test/h",
    );
    expect(
      targetLabel({
        kind: "eventbridge",
        busArn: "arn:aws:events:eu-west-1:123456789012:event-bus/b",
      }),
    ).toBe("eventbridge arn:aws:events:eu-west-1:123456789012:event-bus/b");
    expect(
      targetLabel({ kind: "sqs", queueUrl: "https://sqs.eu-west-1.amazonaws.com/123456789012/q" }),
    ).toBe("sqs https://sqs.eu-west-1.amazonaws.com/123456789012/q");
  });
});

describe("lastErrorLine", () => {
  it("puts the status and a multi-line message on one line", () => {
    expect(
      lastErrorLine({ at: "t", status: 502, message: "bad gateway:\n  <html>\r\n</html>" }),
    ).toBe("502 bad gateway: <html> </html>");
  });

  it("shows a failure without an answer by its message alone, and no failure as -", () => {
    expect(lastErrorLine({ at: "t", message: "the request timed out" })).toBe(
      "the request timed out",
    );
    expect(lastErrorLine(undefined)).toBe("-");
  });

  it("cuts a long message short, leaving the whole of it to --json", () => {
    const line = lastErrorLine({ at: "t", status: 500, message: "x".repeat(500) });
    expect(line).toHaveLength(100);
    expect(line).toMatch(/^500 x+\.\.\.$/);
  });
});

describe("subscriptionTable", () => {
  it("has one row per subscription with its failure streak last", () => {
    const text = subscriptionTable([
      subscription(),
      subscription({
        id: "sub_fedcba9876543210fedcba98",
        name: "bus",
        status: "paused",
        pausedBecause: "failing",
        failureStreak: 100,
        target: {
          kind: "eventbridge",
          busArn: "arn:aws:events:eu-west-1:123456789012:event-bus/b",
        },
      }),
    ]);
    const rows = text
      .trimEnd()
      .split("\n")
      .map((line) => line.split(/\s{2,}/));
    expect(rows).toEqual([
      ["ID", "NAME", "STATUS", "TARGET", "FAILURE STREAK"],
      [
        "sub_0123456789abcdef01234567",
        "results",
        "active",
        "webhook https://example.com/hook",
        "0",
      ],
      [
        "sub_fedcba9876543210fedcba98",
        "bus",
        "paused (failing)",
        "eventbridge arn:aws:events:eu-west-1:123456789012:event-bus/b",
        "100",
      ],
    ]);
  });
});
