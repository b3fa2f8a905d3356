import { createConnection, type Socket } from "node:net";
import type { StageConfig } from "../../config";
import type { CapabilityStatus } from "../../model/capability";
import { OutboundError } from "../../outbound/errors";
import type { ProxyRoute } from "../../outbound/proxy";
import type { HttpClient, SecretSource } from "../../outbound/types";

export interface CapabilityContext {
  config: StageConfig;
  secret: SecretSource;
}

export interface CapabilityCheck {
  available: boolean;
  reason?: string;
  /** Where the answer came from, e.g. "secret:GITHUB_TOKEN". Never the value. */
  source?: string;
}

/** How a stage finds out whether it has a capability: cheaply, and optionally for real. */
export interface CapabilityDetector {
  name: string;
  description: string;
  detect(context: CapabilityContext): CapabilityCheck;
  /** A live check (e.g. the token is accepted); run on refresh, never on the call path. */
  verify?(context: CapabilityContext & { http: HttpClient }): Promise<CapabilityCheck>;
}

/** A capability that is present when a secret is set. */
export function secretCapability(
  name: string,
  secretName: string,
  description: string,
  verify?: CapabilityDetector["verify"],
): CapabilityDetector {
  return {
    name,
    description,
    detect: ({ secret }) =>
      secret(secretName)
        ? { available: true, source: `secret:${secretName}` }
        : {
            available: false,
            reason: `${secretName} is not set on this stage.`,
            source: `secret:${secretName}`,
          },
    ...(verify ? { verify } : {}),
  };
}

/** Whether the stage lets tools reach the network at all. */
/** How long the network probe waits for a connection before it says there is no network. */
const NETWORK_PROBE_TIMEOUT_MS = 2_000;

/**
 * Outbound network access: off when the stage says so, and otherwise found out, not assumed:
 * verification opens a TCP connection to the stage's probe host (`outbound.networkProbe`,
 * aws.amazon.com:443 by default), or, when the outbound client would use a proxy for
 * https://host:port, a CONNECT tunnel to it through that proxy (a 2xx answer counts). A stage
 * whose tools reach only an intranet names a host there; `false` trusts the configuration alone.
 */
export const networkCapability: CapabilityDetector = {
  name: "network",
  description: "Outbound network access for tools that reach the internet.",
  detect: ({ config }) =>
    config.outbound.networkEnabled
      ? { available: true, source: "config:outbound.networkEnabled" }
      : {
          available: false,
          reason: "Outbound network access is disabled on this stage.",
          source: "config:outbound.networkEnabled",
        },
  async verify({ config }) {
    const probe = config.outbound.networkProbe;
    if (probe === false) return { available: true, source: "config:outbound.networkEnabled" };
    // Loaded here, on a capability refresh, not on every cold start (a lazy chunk in the API).
    const { authority, openTunnel, proxyChoice } = await import("../../outbound/proxy");
    const target = authority(probe.host, probe.port);
    const source = `probe:${target}`;
    let route: ProxyRoute | undefined;
    try {
      // The proxy the outbound client would take to https://host:port, NO_PROXY included.
      route = proxyChoice(config.outbound.proxy)(new URL(`https://${target}/`));
    } catch (error) {
      if (error instanceof OutboundError) {
        return { available: false, reason: `No outbound network: ${error.message}.`, source };
      }
      // Not a host a URL can name: the direct connection below says what is wrong with it.
    }
    if (route) {
      const through = `through proxy ${route.address}`;
      const failure = await tunnels(
        (signal) => openTunnel(route, target, signal),
        NETWORK_PROBE_TIMEOUT_MS,
      );
      return failure === undefined
        ? { available: true, reason: `${target} is reachable ${through}.`, source }
        : {
            available: false,
            reason: `No outbound network: ${target} could not be reached ${through} (${failure}).`,
            source,
          };
    }
    const failure = await connects(probe.host, probe.port, NETWORK_PROBE_TIMEOUT_MS);
    return failure === undefined
      ? { available: true, source }
      : {
          available: false,
          reason: `No outbound network: ${target} could not be reached (${failure}).`,
          source,
        };
  },
};

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

/** The first missing capability among `requires`, with its reason, or undefined. */
export function missingCapability(
  requires: readonly string[],
  detectors: readonly CapabilityDetector[],
  context: CapabilityContext,
): { name: string; reason: string } | undefined {
  for (const name of requires) {
    const detector = detectors.find((d) => d.name === name);
    if (!detector) return { name, reason: `No detector is registered for capability ${name}.` };
    const check = detector.detect(context);
    if (!check.available) return { name, reason: check.reason ?? `${name} is not available.` };
  }
  return undefined;
}

/** Checks every capability (with live verification when asked) into storable statuses. */
export async function checkCapabilities(
  detectors: readonly CapabilityDetector[],
  context: CapabilityContext & { http?: HttpClient },
  at: Date,
): Promise<CapabilityStatus[]> {
  return Promise.all(
    detectors.map(async (detector) => {
      let check = detector.detect(context);
      if (check.available && detector.verify && context.http) {
        check = await detector.verify({ ...context, http: context.http }).catch(() => ({
          available: false,
          reason: `${detector.name} could not be verified.`,
          ...(check.source ? { source: check.source } : {}),
        }));
      }
      return {
        name: detector.name,
        available: check.available,
        ...(check.reason ? { reason: check.reason } : {}),
        ...(check.source ? { source: check.source } : {}),
        checkedAt: at.toISOString(),
      };
    }),
  );
}

/** The stage's own detectors, plus those a registered tool needs that it lacks. */
export function withDetectors(
  base: readonly CapabilityDetector[],
  extra: readonly CapabilityDetector[],
): CapabilityDetector[] {
  const names = new Set(base.map((detector) => detector.name));
  return [...base, ...extra.filter((detector) => !names.has(detector.name))];
}
