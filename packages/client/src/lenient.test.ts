import { subscriptionView, typedRunEvent } from "@toolbus/wire/schemas";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { lenient } from "./lenient.js";

describe("lenient", () => {
  it("keeps unknown keys at every depth, strict objects and union members included", () => {
    const schema = z.strictObject({
      items: z.array(z.object({ id: z.string() })).optional(),
      target: z.discriminatedUnion("kind", [
        z.strictObject({ kind: z.literal("a"), url: z.string() }),
        z.strictObject({ kind: z.literal("b") }),
      ]),
    });
    const body = {
      items: [{ id: "1", extra: 1 }],
      target: { kind: "a", url: "u", more: 2 },
      top: 3,
    };
    expect(schema.safeParse(body).success).toBe(false);
    expect(lenient(schema).parse(body)).toEqual(body);
  });

  it("keeps everything else the schema says: required fields, enums and refinements", () => {
    const schema = z
      .object({ status: z.enum(["ok", "failed"]), reason: z.string().optional() })
      .refine((value) => value.status !== "failed" || value.reason, "A failure says why.");
    expect(lenient(schema).safeParse({ status: "failed" }).success).toBe(false);
    expect(lenient(schema).safeParse({ status: "odd" }).success).toBe(false);
    expect(lenient(schema).safeParse({}).success).toBe(false);
    expect(lenient(schema).parse({ status: "failed", reason: "r", x: 1 })).toEqual({
      status: "failed",
      reason: "r",
      x: 1,
    });
  });

  it("hands out a fresh default each time, as the schema does", () => {
    const schema = lenient(z.object({ tags: z.array(z.string()).default([]) }));
    const first = schema.parse({});
    first.tags.push("changed");
    expect(schema.parse({})).toEqual({ tags: [] });
  });

  it("derives each schema once, and leaves the wire's own untouched", () => {
    expect(lenient(subscriptionView)).toBe(lenient(subscriptionView));
    expect(lenient(typedRunEvent)).not.toBe(typedRunEvent);
    const event = {
      eventKey: "r/c/approval",
      detailType: "ToolCallApprovalRequested",
      occurredAt: "2026-11-27T00:00:00.000Z",
      detail: {
        eventKey: "r/c/approval",
        parentRunId: "r",
        callId: "c",
        toolId: "t",
        toolset: "s",
        input: {},
        requestedBy: { id: "k", role: "member" },
        scheduledAt: "2026-11-27T00:00:00.000Z",
        approval: { expiresAt: "2026-11-28T00:00:00.000Z", decideUrl: "/d", newer: true },
      },
    };
    expect(lenient(typedRunEvent).parse(event)).toEqual(event);
    const strict = typedRunEvent.parse(event);
    expect(strict.detailType === "ToolCallApprovalRequested" && strict.detail.approval).toEqual({
      expiresAt: "2026-11-28T00:00:00.000Z",
      decideUrl: "/d",
    });
  });
});
