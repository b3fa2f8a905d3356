import { TtlCache } from "../../util/ttl-cache";

/** One dependency the API cannot serve without, and a cheap way to ask whether it answers. */
export interface DependencyProbe {
  name: string;
  /** Resolves when the dependency answered; rejects (or is aborted by `signal`) when not. */
  check(signal: AbortSignal): Promise<void>;
}

export interface DependencyState {
  status: "ok" | "unavailable";
  /** How long the probe took, ms. */
  latencyMs: number;
  /** Why it is unavailable: the error's name, never its stack or a request's contents. */
  reason?: string;
}

export interface HealthReport {
  status: "ok" | "unavailable";
  dependencies: Record<string, DependencyState>;
  checkedAt: string;
}

export interface HealthOptions {
  /** Longest one probe may take, ms: a hung dependency is reported, not waited for. */
  timeoutMs?: number;
  /**
   * How long a report is reused, ms. `/health` needs no key, so without this anyone could turn
   * a flood of health checks into a flood of DynamoDB reads.
   */
  reuseMs?: number;
}

/**
 * Whether each dependency answers now. A dependency that fails or does not answer within the
 * timeout is `unavailable`, and so is the whole report: a load balancer or supervisor stops
 * sending work to an API that would only answer 503.
 */
export class HealthService {
  readonly #reports: TtlCache<"report", HealthReport>;
  readonly #timeoutMs: number;

  constructor(
    private readonly probes: readonly DependencyProbe[],
    options: HealthOptions = {},
  ) {
    this.#timeoutMs = options.timeoutMs ?? 1_000;
    this.#reports = new TtlCache(options.reuseMs ?? 1_000, 1);
  }

  report(): Promise<HealthReport> {
    return this.#reports.get("report", () => this.#check());
  }

  async #check(): Promise<HealthReport> {
    const states = await Promise.all(this.probes.map((probe) => this.#probe(probe)));
    const dependencies = Object.fromEntries(this.probes.map((probe, i) => [probe.name, states[i]]));
    const down = states.some((state) => state?.status !== "ok");
    return {
      status: down ? "unavailable" : "ok",
      dependencies: dependencies as Record<string, DependencyState>,
      checkedAt: new Date().toISOString(),
    };
  }

  async #probe(probe: DependencyProbe): Promise<DependencyState> {
    const started = performance.now();
    const latency = () => Math.round((performance.now() - started) * 10) / 10;
    try {
      await probe.check(AbortSignal.timeout(this.#timeoutMs));
      return { status: "ok", latencyMs: latency() };
    } catch (error) {
      const name = error instanceof Error ? error.name : "Error";
      const reason = name === "TimeoutError" || name === "AbortError" ? "no answer in time" : name;
      return { status: "unavailable", latencyMs: latency(), reason };
    }
  }
}
