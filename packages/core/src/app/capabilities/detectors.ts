import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { StageConfig } from "../../config";
import type { HttpClient, Reachability, SecretSource } from "../../outbound/types";

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
  async verify({ config, http }) {
    const probe = config.outbound.networkProbe;
    if (probe === false) return { available: true, source: "config:outbound.networkEnabled" };
    // Opening the connection is the outbound client's job; the app judges what it found.
    const found: Reachability = http.probe
      ? await http.probe(probe.host, probe.port, NETWORK_PROBE_TIMEOUT_MS)
      : {
          target: `${probe.host}:${probe.port}`,
          unroutable: "this function's outbound client does not reach it",
        };
    const source = `probe:${found.target}`;
    if (found.unroutable !== undefined) {
      return { available: false, reason: `No outbound network: ${found.unroutable}.`, source };
    }
    const through = found.proxy ? ` through proxy ${found.proxy}` : "";
    if (found.failure !== undefined) {
      return {
        available: false,
        reason: `No outbound network: ${found.target} could not be reached${through} (${found.failure}).`,
        source,
      };
    }
    return found.proxy
      ? { available: true, reason: `${found.target} is reachable${through}.`, source }
      : { available: true, source };
  },
};

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
