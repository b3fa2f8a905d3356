import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { StageConfig } from "../../config";
import type { HttpClient, SecretSource } from "../../outbound/types";
import type { CapabilityStore } from "../../ports";
import { firstSecret } from "../../secrets";
import { type CapabilityDetector, checkCapabilities, withDetectors } from "./detectors";

export interface CapabilityServiceDeps {
  store: CapabilityStore;
  config: StageConfig;
  /** The stage's own detectors (the built-in tools' needs). */
  detectors: readonly CapabilityDetector[];
  /** This function's secrets. */
  secret: SecretSource;
  http: HttpClient;
  /** What registered toolsets add: their secrets' detectors and where to read those secrets. */
  registered?: () => Promise<{ detectors: CapabilityDetector[]; secret: SecretSource }>;
  now?: () => Date;
}

/**
 * The stage's capabilities: detected from configuration and secrets, optionally verified
 * live, and stored, so selection can say what is available and why without checking again.
 */
export class CapabilityService {
  constructor(private readonly deps: CapabilityServiceDeps) {}

  list(): Promise<CapabilityStatus[]> {
    return this.deps.store.list();
  }

  /** Detects (and with `verify`, checks live) every capability of the stage and stores them. */
  async refresh(options: { verify?: boolean } = {}): Promise<CapabilityStatus[]> {
    const registered = await this.deps.registered?.();
    return this.record(
      withDetectors(this.deps.detectors, registered?.detectors ?? []),
      firstSecret(this.deps.secret, registered?.secret),
      options,
    );
  }

  /** Checks exactly these detectors and stores what they found. */
  async record(
    detectors: readonly CapabilityDetector[],
    secret: SecretSource,
    options: { verify?: boolean } = {},
  ): Promise<CapabilityStatus[]> {
    const statuses = await checkCapabilities(
      detectors,
      {
        config: this.deps.config,
        secret,
        ...(options.verify ? { http: this.deps.http } : {}),
      },
      this.deps.now?.() ?? new Date(),
    );
    for (const status of statuses) await this.deps.store.put(status);
    return statuses;
  }
}
