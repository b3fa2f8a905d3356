import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import * as z from "zod";
import type { CapabilityDetector } from "./app/capabilities/detectors";
import { createHttpClient } from "./outbound/client";
import type { OutboundConfig, SecretSource } from "./outbound/types";
import { NOBODY_WAITS } from "./relay/link";
import { defineTool, type ToolContext, type ToolNeeds } from "./tool-definition";

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
    progress: () => undefined,
    caller: NOBODY_WAITS,
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

/** What a stand-in upstream received. */
export interface RecordedRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Route = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface Upstream {
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on loopback standing in for an upstream API in tests: it records every
 * request and answers through `route`. Stage configs must allow 127.0.0.1 to reach it.
 */
export async function startUpstream(route: Route): Promise<Upstream> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        url: new URL(req.url ?? "/", "http://127.0.0.1"),
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(recorded);
      Promise.resolve(route(recorded, res)).catch(() => {
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A detector that always finds its capability: declarations under test name it. */
export const testDetector = (name: string): CapabilityDetector => ({
  name,
  description: name,
  detect: () => ({ available: true }),
});

/** A tool that does nothing, declaring `needs`: what is built from a declaration is under test. */
export const testTool = (id: string, needs: ToolNeeds) =>
  defineTool({
    spec: { id, toolset: "test", title: id, description: "d", category: "utility", usageHint: "u" },
    input: z.object({}),
    output: z.object({}),
    needs,
    execute: async () => ({ output: "", data: {} }),
  });
