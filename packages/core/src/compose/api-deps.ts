import type { CapabilityStatus } from "@toolbus/wire/model/capability";
import type { CallService } from "../app/calls/service";
import type { RegisteredToolsets } from "../app/catalog/registered-toolsets";
import type { StageEvents } from "../app/events/stage-events";
import type { McpFederation } from "../app/federation/service";
import type { HealthService } from "../app/health/service";
import type { RunGovernor } from "../app/runs/governor";
import type { SearchService } from "../app/search/service";
import type { SelectionService } from "../app/selection/service";
import type { SubscriptionService } from "../app/subscriptions/service";
import type { StageConfig } from "../config";
import type { Connections } from "../connections/port";
import type { Logger } from "../observability/log";
import type { MetricsSnapshot } from "../observability/metrics";
import type {
  AuditLog,
  CallChannel,
  CatalogStore,
  EventLog,
  KeyStore,
  McpSubscriptions,
  TaskIndex,
} from "../ports";

/** Everything the HTTP API needs; the composition root builds it for AWS and for local. */
export interface ApiDeps {
  config: StageConfig;
  catalog: CatalogStore;
  calls: CallService;
  /** What each caller may see and use: the catalog, the agent files, /mcp. */
  selection: SelectionService;
  /** Tool search over what the caller may see: REST and /mcp. */
  search: SearchService;
  events: EventLog;
  keys: KeyStore;
  /** Stored capability statuses, and a refresh that detects and verifies them again. */
  capabilities: { list(): Promise<CapabilityStatus[]>; refresh(): Promise<CapabilityStatus[]> };
  /**
   * Prompts, resources and completions of the registered MCP servers, federated through
   * `/mcp`; without it `/mcp` offers none.
   */
  federation?: McpFederation;
  /**
   * Who subscribed to which federated resource through `/mcp` (`resources/subscribe`, told of
   * changes on the `GET /mcp` stream); without it `/mcp` offers no subscriptions.
   */
  mcpSubscriptions?: McpSubscriptions;
  /** How often an open `GET /mcp` stream reads the caller's subscribed resources, ms (default 5 s). */
  mcpResourcePollMs?: number;
  /**
   * The relay between running calls and the MCP callers waiting for them (their progress, log
   * messages and servers' requests); without it nothing reaches a caller mid-call.
   */
  channel?: CallChannel;
  /** The MCP tasks each caller made (2025-11-25 `tasks/list`); without it none is listed. */
  taskIndex?: TaskIndex;
  /** Registered http / mcp toolsets; without it the registered-toolsets routes are absent. */
  registered?: RegisteredToolsets;
  /** Where failures and unaudited writes are logged (default: JSON lines on stderr). */
  log?: Logger;
  /** Run budgets (`/v1/runs/{runId}`, its policy), loaded on first use; without it the routes are absent. */
  runs?: () => Promise<RunGovernor>;
  /** The stage-wide event stream (`GET /v1/events`), loaded on first use; without it the route is absent. */
  stageEvents?: () => Promise<StageEvents>;
  /** Subscriptions (`/v1/subscriptions`), loaded on first use; without it the routes are absent. */
  subscriptions?: () => Promise<SubscriptionService>;
  /**
   * People's connected accounts (`/v1/connections`, `/connect/{provider}`); absent where the
   * stage configures no `connections`.
   */
  connections?: Connections;
  /** Where admin writes are recorded (GET /v1/audit); without it nothing is recorded. */
  audit?: AuditLog;
  /** Call metrics counted in this process (`npm start`); absent on AWS, where CloudWatch has them. */
  metrics?: { snapshot(): MetricsSnapshot };
  /** Whether DynamoDB and the bus answer, for `/health`; without it `/health` reports the stage only. */
  health?: HealthService;
  /**
   * The bootstrap admin key from configuration (TOOLBUS_ADMIN_KEY), compared in constant time;
   * a function is asked on every request (on AWS the key is a secret loaded on first use).
   */
  adminKey?: string | (() => string | undefined);
  /**
   * The host names `/mcp` answers (DNS-rebinding protection), or `any` where the platform
   * routes by host already; the stage's `mcp.allowedHosts` wins. Default: loopback.
   */
  allowedHosts?: readonly string[] | "any";
  /**
   * The stage's streaming endpoint, when it has one apart from this API (the Function URL on
   * AWS): `/health` names it, and agent files point MCP clients at its `/mcp`.
   */
  streamUrl?: string;
  /**
   * `streaming`: this app is that endpoint, and serves only what streams (event streams, /mcp)
   * and `/health` (api/streaming.ts). Default `api`: every route.
   */
  surface?: "api" | "streaming";
  /** Poll interval for `text/event-stream` followers, ms. */
  followIntervalMs?: number;
  /** Longest a `text/event-stream` follower stays connected, ms (default 15 min); it then reconnects. */
  followMaxMs?: number;
  /**
   * The response reaches the client only once it ends (API Gateway buffers it): a stream then
   * ends as soon as it has sent events, and tells the client to reconnect within the poll
   * interval (`retry:`), so each batch arrives when it is logged, not when the stream ends.
   */
  followBuffered?: boolean;
  /**
   * How often an open event stream asks whether its key still holds, ms (default 1 s). A
   * revocation made in this process ends its streams at once whatever this is.
   */
  keyCheckMs?: number;
  /** Event streams one key may hold open in this process (default 20); more answer 429. */
  maxStreamsPerKey?: number;
  /** Interval of `: keep-alive` comments on an idle event stream, ms (default 15 s). */
  keepAliveMs?: number;
}
