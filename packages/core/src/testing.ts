import { createHttpClient } from "./outbound/client";
import type { OutboundConfig, SecretSource } from "./outbound/types";
import type { ToolContext } from "./tool-definition";

/**
 * A ToolContext for calling a tool's `execute` directly (tests, benchmarks). Its HTTP client
 * is the real one; with no `outbound` given, the network is off, so a pure tool that tried to
 * reach it would fail loudly.
 */
export function testToolContext<S>(
  settings: S,
  options: {
    outbound?: Partial<OutboundConfig>;
    secrets?: Record<string, string>;
    now?: () => Date;
  } = {},
): ToolContext<S> {
  const secrets = options.secrets ?? {};
  const secret: SecretSource = (name) => secrets[name];
  return {
    callId: "test-call",
    parentRunId: "test-run",
    signal: new AbortController().signal,
    settings,
    http: createHttpClient({
      userAgent: "toolbus-test",
      allowHosts: [],
      defaultTimeoutMs: 2_000,
      defaultMaxBytes: 1_000_000,
      networkEnabled: false,
      ...options.outbound,
    }),
    secret,
    now: options.now ?? (() => new Date()),
  };
}
