import { type OutboundConfig, OutboundError } from "@toolbus/core/outbound";
import { expect } from "vitest";

/** An outbound client's configuration for tests: loopback allowed, generous limits. */
export function outboundConfig(overrides: Partial<OutboundConfig> = {}): OutboundConfig {
  return {
    userAgent: "ToolbusTest/1.0",
    allowHosts: ["127.0.0.1"],
    defaultTimeoutMs: 5_000,
    defaultMaxBytes: 1024 * 1024,
    networkEnabled: true,
    ...overrides,
  };
}

/** The OutboundError a request failed with; the test fails if it succeeded or threw another. */
export async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}
