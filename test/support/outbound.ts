import type { OutboundConfig } from "@toolbus/core/outbound";

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
