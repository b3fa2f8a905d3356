import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { describe, expect, it } from "vitest";
import { ConflictError, UnavailableError } from "../../errors";
import { isUnavailable, toStoreError } from "./client";

const sdkError = (name: string, httpStatusCode?: number) =>
  Object.assign(new Error(name), { name, $metadata: { attempts: 1, httpStatusCode } });

describe("isUnavailable", () => {
  it.each([
    ["a refused connection", Object.assign(new Error("connect"), { code: "ECONNREFUSED" })],
    ["throttling", sdkError("ProvisionedThroughputExceededException", 400)],
    ["a server error", sdkError("InternalServerError", 500)],
    ["a 503", sdkError("ServiceUnavailable", 503)],
    ["a timeout", sdkError("TimeoutError")],
    ["an error that never got a reply", sdkError("Error")],
  ])("treats %s as unavailable", (_label, error) => {
    expect(isUnavailable(error)).toBe(true);
  });

  it.each([
    [
      "a failed condition",
      new ConditionalCheckFailedException({
        message: "failed",
        $metadata: { httpStatusCode: 400 },
      }),
    ],
    ["a validation error", sdkError("ValidationException", 400)],
    ["a missing table", sdkError("ResourceNotFoundException", 400)],
    ["our own error", new ConflictError("conflict")],
    ["a bug before sending", new TypeError("x is not a function")],
  ])("does not treat %s as unavailable", (_label, error) => {
    expect(isUnavailable(error)).toBe(false);
  });
});

describe("toStoreError", () => {
  it("wraps an outage in UnavailableError with the cause and the operation", () => {
    const cause = Object.assign(new Error("connect"), { code: "ECONNREFUSED" });
    const error = toStoreError(cause, "calls.get", "table-1");
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).cause).toBe(cause);
    expect((error as UnavailableError).context).toEqual({
      operation: "calls.get",
      tableName: "table-1",
    });
  });

  it("passes anything else through unchanged", () => {
    const error = sdkError("ValidationException", 400);
    expect(toStoreError(error, "calls.get", "table-1")).toBe(error);
  });
});
