import { createConnection, type Socket } from "node:net";
import { type HttpClientOptions, proxyChooser } from "./client";
import { OutboundError } from "./errors";
import { authority, openTunnel, type ProxyChoice, type ProxyRoute } from "./proxy";
import type { HttpClient, OutboundConfig, Reachability } from "./types";

/**
 * The client with a probe of the network beside it, routed as its requests are: where
 * capabilities are verified (the API, the seed), never in a tool's function, which only
 * detects them and so carries no probe.
 */
export function withProbe(
  client: HttpClient,
  config: OutboundConfig,
  options: Pick<HttpClientOptions, "env"> = {},
): HttpClient {
  const proxy = proxyChooser(config, options.env ?? process.env);
  return {
    ...client,
    probe: async (host, port, timeoutMs) => probeConnection(await proxy(), host, port, timeoutMs),
  };
}

/**
 * Opens a connection to host:port the way the outbound client would route a request to
 * https://host:port (through its proxy, NO_PROXY included) and closes it again.
 */
async function probeConnection(
  choice: ProxyChoice,
  host: string,
  port: number,
  timeoutMs: number,
): Promise<Reachability> {
  const target = authority(host, port);
  let route: ProxyRoute | undefined;
  try {
    route = choice(new URL(`https://${target}/`));
  } catch (error) {
    if (error instanceof OutboundError) return { target, unroutable: error.message };
    // Not a host a URL can name: the direct connection below says what is wrong with it.
  }
  if (route) {
    const failure = await tunnels((signal) => openTunnel(route, target, signal), timeoutMs);
    return { target, proxy: route.address, ...(failure !== undefined ? { failure } : {}) };
  }
  const failure = await connects(host, port, timeoutMs);
  return { target, ...(failure !== undefined ? { failure } : {}) };
}

/** Undefined once a TCP connection to host:port opens; else why not (an error code). */
function connects(host: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: timeoutMs });
    const done = (failure: string | undefined) => {
      socket.destroy();
      resolve(failure);
    };
    socket.once("connect", () => done(undefined));
    socket.once("timeout", () => done(`no answer within ${timeoutMs} ms`));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

/** Undefined once `open` gets its tunnel through the proxy; else why not. */
async function tunnels(
  open: (signal: AbortSignal) => Promise<Socket>,
  timeoutMs: number,
): Promise<string | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    (await open(controller.signal)).destroy();
    return undefined;
  } catch (error) {
    if (controller.signal.aborted) return `no answer within ${timeoutMs} ms`;
    const detail = error instanceof OutboundError ? error.context.detail : undefined;
    return typeof detail === "string" ? detail : "the tunnel failed";
  } finally {
    clearTimeout(timer);
  }
}
