import {
  apiKeyCreatedView,
  apiKeyListView,
  apiKeyView,
  approvalsView,
  callAcceptedView,
  callView,
  capabilitiesView,
  connectionListView,
  connectionProvidersView,
  connectLinkView,
  disconnectedView,
  failuresPageView,
  healthView,
  metricsView,
  promptView,
  redriveResultView,
  registrationOutcomeView,
  removedToolsetView,
  renderedAgentView,
  replayResultView,
  reviewDecisionView,
  runPoliciesView,
  runView,
  selectionView,
  subscriptionListView,
  subscriptionView,
  subscriptionWithSecretView,
  toolListView,
  toolSearchView,
  toolsetListView,
  toolsetReviewView,
  toolsetWithToolsView,
  toolView,
} from "@toolbus/wire/schemas";
import { type EventsOptions, type RunEventStream, runEvents } from "./events.js";
import type {
  Category,
  Prompt,
  PromptTool,
  RenderAgentRequest,
} from "./generated/catalog-types.js";
import { readJson, Transport } from "./http.js";
import type {
  RefreshToolsetRequest,
  RemoveToolsetOptions,
  ReviewDecisionOptions,
  RevisionOptions,
  ToolAvailability,
  ToolsetRegistration,
} from "./registration.js";
import type {
  ApiKeyRecord,
  CallView,
  CapabilityStatus,
  Connection,
  ConnectionProvider,
  ConnectLink,
  CreatedApiKey,
  Disconnected,
  FailuresPage,
  Health,
  Metrics,
  RegistrationOutcome,
  RenderedAgentFile,
  ReplayResult,
  ReviewDecision,
  Run,
  RunPolicies,
  RunPolicy,
  Selection,
  StageEventsPage,
  Subscription,
  SubscriptionRequest,
  SubscriptionWithSecret,
  Tool,
  ToolListItem,
  ToolSearch,
  Toolset,
  ToolsetRegistered,
  ToolsetRemoved,
  ToolsetReview,
  ToolsetWithTools,
} from "./schemas.js";
import {
  type StageEventStream,
  type StageEventsOptions,
  type StageEventsPageOptions,
  stageEvents,
  stageEventsPage,
} from "./stage-events.js";
import type { ToolId, ToolInput } from "./tools.js";

export interface ToolbusClientOptions {
  /** The API's base URL, e.g. `http://127.0.0.1:8787` or an API Gateway stage URL. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /**
   * Where followed event streams are read: the stage's `StreamUrl` output on AWS, where API
   * Gateway would buffer them. Absent: the URL the API names in `/health`, else `baseUrl`.
   * `false`: always `baseUrl`.
   */
  streamUrl?: string | false;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Extra headers for every request (e.g. `x-request-id`). */
  headers?: Record<string, string>;
}

export interface ToolFilters {
  category?: Category;
  toolset?: string;
  /** Keep tools offered in this mode, and judge `available` in it (default: the stage's). */
  mode?: string;
  /** Only tools that are (true) or are not (false) in your selection. */
  available?: boolean;
}

export interface CallOptions {
  /** The run the call belongs to; its events are logged under it. */
  runId: string;
  /** Your id for the call: repeating a call with the same id and input returns the same call. */
  callId?: string;
  /** Workflow mode (default: the stage's). */
  mode?: string;
  /** Seconds to wait for the result (default and cap from the stage; 0 returns at once). */
  wait?: number;
  parentCallId?: string;
  signal?: AbortSignal;
}

export interface FailuresOptions {
  /** Page size, 1-100 (default: the API's, 50). */
  limit?: number;
  /** The `cursor` of the page before. */
  cursor?: string;
}

export interface SelectRequest {
  /** Workflow mode; absent or null: the stage's default. */
  mode?: string | null;
  /** Select as this role (default: your own); not above your own. */
  role?: string;
  allow?: string[];
  deny?: string[];
}

export interface PromptRequest extends SelectRequest {
  /** Largest Markdown size in UTF-8 bytes: guidelines are dropped first, then examples. */
  budgetBytes?: number;
  /** `list` (default): every selected tool; `search`: the MCP search surface's two tools. */
  style?: "list" | "search";
}

export interface ToolSearchOptions extends SelectRequest {
  /** How many tools at most, 1-50 (default 5). */
  limit?: number;
  /**
   * Say why each tool was found (`explanation`); an administrator also gets the matching tools
   * selection left out, with its reasons (`excluded`).
   */
  explain?: boolean;
}

export type { Category, Prompt, PromptTool, RenderAgentRequest };
export type HarnessChoice = RenderAgentRequest["harness"];
export type RenderAgentResult<H extends HarnessChoice> = H extends "all"
  ? { files: RenderedAgentFile[] }
  : RenderedAgentFile;

/**
 * A typed client of the Toolbus HTTPS API. Calls are typed by tool id for the built-in tools
 * (`client.call("readability_analyzer", { text }, { runId })`); every failure is a
 * ToolbusClientError. A tool that fails is not an error: the call comes back `failed`.
 */
export class ToolbusClient {
  readonly #http: Transport;

  readonly tools = {
    /** The catalog's tools, each with whether it is available to you and why not. */
    list: async (filters: ToolFilters = {}): Promise<ToolListItem[]> => {
      const body = await this.#http.json("GET", "/v1/tools", {
        query: {
          category: filters.category,
          toolset: filters.toolset,
          mode: filters.mode,
          available: filters.available,
        },
        schema: toolListView,
      });
      return body.tools;
    },
    get: async (id: string): Promise<Tool> =>
      this.#http.json("GET", `/v1/tools/${encodeURIComponent(id)}`, { schema: toolView }),
    /**
     * Tools for a need in words, best first: only those your selection offers, so each can be
     * called. `client.tools.search("refund a payment", { limit: 3 })`.
     */
    search: (query: string, options: ToolSearchOptions = {}): Promise<ToolSearch> =>
      this.#http.json("POST", "/v1/tools/search", {
        json: { q: query, ...options },
        schema: toolSearchView,
      }),
    /** Lets selection offer the tool again on this stage (admin). */
    enable: (id: string, options: RevisionOptions = {}): Promise<Tool> =>
      this.#setEnabled(id, "enable", options),
    /** Keeps the tool out of every selection on this stage, with the reason `disabled` (admin). */
    disable: (id: string, options: RevisionOptions = {}): Promise<Tool> =>
      this.#setEnabled(id, "disable", options),
    /**
     * Replaces who may use the tool on this stage (admin), built-in or registered:
     * `client.tools.setAvailability("get_env", { minRole: "admin" })`. It survives refreshes and
     * re-registrations that do not state availability themselves.
     */
    setAvailability: (
      id: string,
      availability: ToolAvailability,
      options: RevisionOptions = {},
    ): Promise<Tool> =>
      this.#http.json("PUT", `/v1/tools/${encodeURIComponent(id)}/availability`, {
        json: availability,
        schema: toolView,
        ...ifMatchHeaders(options),
      }),
  };

  readonly toolsets = {
    list: async (): Promise<Toolset[]> =>
      (await this.#http.json("GET", "/v1/toolsets", { schema: toolsetListView })).toolsets,
    get: async (name: string): Promise<ToolsetWithTools> =>
      this.#http.json("GET", `/v1/toolsets/${encodeURIComponent(name)}`, {
        schema: toolsetWithToolsView,
      }),
    /**
     * Registers an http toolset or a remote MCP server under `registration.name`, or replaces
     * the one of that name (admin). The API checks everything before writing anything.
     */
    register: async (registration: ToolsetRegistration): Promise<ToolsetRegistered> => {
      const path = `/v1/registered-toolsets/${encodeURIComponent(registration.name)}`;
      const response = await this.#http.send("PUT", path, { json: registration });
      // Only the status tells a new toolset (201) from a replaced one (200).
      const outcome = await readJson(response, registrationOutcomeView);
      return { ...outcome, created: response.status === 201 };
    },
    /**
     * Lists a registered MCP server's tools again (admin). Unless the registration follows its
     * server (`updates: "follow"`), what changed is held for review (`held`) and the pinned
     * definitions stay served: read it with `review`, then `accept` or `reject`.
     */
    refresh: async (
      name: string,
      request: RefreshToolsetRequest = {},
    ): Promise<RegistrationOutcome> =>
      this.#http.json("POST", registeredPath(name, "refresh"), {
        json: request,
        schema: registrationOutcomeView,
      }),
    /**
     * The changes a registered MCP server made that wait for review, and those rejected before
     * (admin): each field by field, from the pinned definition to what the server declares.
     */
    review: (name: string): Promise<ToolsetReview> =>
      this.#http.json("GET", registeredPath(name, "review"), { schema: toolsetReviewView }),
    /**
     * Serves held changes from now on (admin): those of `tools` (ids), else every pending one.
     * `ifMatch` is the toolset revision the review showed.
     */
    accept: (name: string, options: ReviewDecisionOptions = {}): Promise<ReviewDecision> =>
      this.#decideReview(name, "accept", options),
    /**
     * Rejects held changes (admin): the pinned definitions stay served, and the same change
     * is not held again. Chosen as for `accept`.
     */
    reject: (name: string, options: ReviewDecisionOptions = {}): Promise<ReviewDecision> =>
      this.#decideReview(name, "reject", options),
    /** Removes a registered toolset and its tools (admin); built-in toolsets stay. */
    remove: (name: string, options: RemoveToolsetOptions = {}): Promise<ToolsetRemoved> =>
      this.#http.json("DELETE", registeredPath(name), {
        schema: removedToolsetView,
        ...ifMatchHeaders(options),
      }),
  };

  /** API keys (admin). */
  readonly keys = {
    /** The new key is in this answer and nowhere else. */
    /** `actsFor`: the key may name end users it acts for (`X-Toolbus-On-Behalf-Of`). */
    create: (input: { name: string; role: string; actsFor?: boolean }): Promise<CreatedApiKey> =>
      this.#http.json("POST", "/v1/keys", { json: input, schema: apiKeyCreatedView }),
    list: async (): Promise<ApiKeyRecord[]> =>
      (await this.#http.json("GET", "/v1/keys", { schema: apiKeyListView })).keys,
    revoke: (keyId: string): Promise<ApiKeyRecord> =>
      this.#http.json("DELETE", `/v1/keys/${encodeURIComponent(keyId)}`, {
        schema: apiKeyView,
      }),
  };

  /**
   * Your accounts at OAuth providers, for tools that act as you (the stage's `connections`).
   * Connecting happens in a browser: `link` gives the URL to open. Never a token.
   */
  readonly connections = {
    /**
     * Your connections; an administrator's `{ principal }` reads another principal's, and
     * `{ all: true }` everyone's.
     */
    list: async (options: { principal?: string; all?: boolean } = {}): Promise<Connection[]> =>
      (
        await this.#http.json("GET", "/v1/connections", {
          query: { principal: options.principal, all: options.all ? "true" : undefined },
          schema: connectionListView,
        })
      ).connections,
    /** The providers this stage connects accounts at, and whether you have connected each. */
    providers: async (): Promise<ConnectionProvider[]> =>
      (
        await this.#http.json("GET", "/v1/connections/providers", {
          schema: connectionProvidersView,
        })
      ).providers,
    /**
     * A link that connects your account at `provider` when opened in a browser, until
     * `expiresAt`: whoever opens it connects their account to you, so open it yourself. `scopes`: what to ask for (default: the provider's configured ones).
     */
    link: (provider: string, options: { scopes?: string[] } = {}): Promise<ConnectLink> =>
      this.#http.json("POST", connectionPath(provider), {
        json: options.scopes ? { scopes: options.scopes } : {},
        schema: connectLinkView,
      }),
    /**
     * Forgets the connection and revokes its tokens at the provider where it can; an
     * administrator's `{ principal }` disconnects another principal's.
     */
    disconnect: (provider: string, options: { principal?: string } = {}): Promise<Disconnected> =>
      this.#http.json("DELETE", connectionPath(provider), {
        query: { principal: options.principal },
        schema: disconnectedView,
      }),
  };

  /**
   * Runs as the platform governs them: a run's policy, what it used and has left, its calls by
   * status; and its own limits, set once and only tighter than the stage's.
   */
  readonly runs = {
    get: (runId: string): Promise<Run> =>
      this.#http.json("GET", `/v1/runs/${encodeURIComponent(runId)}`, { schema: runView }),
    setPolicy: (runId: string, policy: RunPolicy): Promise<RunPolicies> =>
      this.#http.json("PUT", `/v1/runs/${encodeURIComponent(runId)}/policy`, {
        json: policy,
        schema: runPoliciesView,
      }),
  };

  /**
   * Calls that wait for a person's approval (the stage's `approvals` rules): list them, and
   * approve or deny one (the `approve` permission; a decision is final).
   */
  readonly approvals = {
    /** Calls awaiting approval across runs, the soonest to expire first. */
    list: async (limit?: number): Promise<CallView[]> =>
      (
        await this.#http.json("GET", "/v1/approvals", {
          query: { limit },
          schema: approvalsView,
        })
      ).calls as CallView[],
    approve: (runId: string, callId: string, reason?: string): Promise<CallView> =>
      this.#decide(runId, callId, "approve", reason),
    deny: (runId: string, callId: string, reason?: string): Promise<CallView> =>
      this.#decide(runId, callId, "deny", reason),
  };

  #decideReview(
    name: string,
    decision: "accept" | "reject",
    options: ReviewDecisionOptions,
  ): Promise<ReviewDecision> {
    const { tools, ...revision } = options;
    return this.#http.json("POST", registeredPath(name, `review/${decision}`), {
      json: tools ? { tools } : {},
      schema: reviewDecisionView,
      ...ifMatchHeaders(revision),
    });
  }

  #decide(
    runId: string,
    callId: string,
    verdict: "approve" | "deny",
    reason: string | undefined,
  ): Promise<CallView> {
    return this.#http.json(
      "POST",
      `/v1/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(callId)}/${verdict}`,
      { json: reason ? { reason } : {}, schema: callView },
    ) as Promise<CallView>;
  }

  /**
   * Subscriptions: an event pattern over Toolbus's events and a webhook, bus or queue that
   * gets each matching event. A key manages its own (an admin any); another key's answers 404.
   */
  readonly subscriptions = {
    /** The signing secret is in this answer and nowhere else. */
    create: (request: SubscriptionRequest): Promise<SubscriptionWithSecret> =>
      this.#http.json("POST", "/v1/subscriptions", {
        json: request,
        schema: subscriptionWithSecretView,
      }),
    list: async (): Promise<Subscription[]> =>
      (await this.#http.json("GET", "/v1/subscriptions", { schema: subscriptionListView }))
        .subscriptions,
    get: (id: string): Promise<Subscription> =>
      this.#http.json("GET", subscriptionPath(id), { schema: subscriptionView }),
    /** Events matched while paused are not queued. */
    pause: (id: string): Promise<Subscription> =>
      this.#http.json("POST", subscriptionPath(id, "pause"), { schema: subscriptionView }),
    /** Active again, with a clean failure streak. */
    resume: (id: string): Promise<Subscription> =>
      this.#http.json("POST", subscriptionPath(id, "resume"), { schema: subscriptionView }),
    /** A new signing secret, shown once; the old one keeps signing beside it for a while. */
    rotateSecret: (id: string): Promise<SubscriptionWithSecret> =>
      this.#http.json("POST", subscriptionPath(id, "rotate-secret"), {
        schema: subscriptionWithSecretView,
      }),
    remove: async (id: string): Promise<void> => {
      // 204: nothing to read.
      await this.#http.send("DELETE", subscriptionPath(id));
    },
    /** Dead letters (deliveries that failed until the retry window closed), newest first. */
    failures: (id: string, options: FailuresOptions = {}): Promise<FailuresPage> =>
      this.#http.json("GET", subscriptionPath(id, "failures"), {
        query: { limit: options.limit, cursor: options.cursor },
        schema: failuresPageView,
      }),
    /**
     * Sends dead letters again (all of them, or those with the given event keys) with a fresh
     * retry window; resolves to how many went back.
     */
    redrive: async (id: string, eventKeys?: readonly string[]): Promise<number> =>
      (
        await this.#http.json("POST", subscriptionPath(id, "redrive"), {
          json: eventKeys ? { eventKeys } : {},
          schema: redriveResultView,
        })
      ).redriven,
    /**
     * Queues logged events that the pattern matches again, marked as a replay: a run's (a run
     * id), or those the stage recorded in a time window (`{ from, to? }`).
     */
    replay: (
      id: string,
      what: string | { runId: string } | { from: string; to?: string },
    ): Promise<ReplayResult> =>
      this.#http.json("POST", subscriptionPath(id, "replay"), {
        json: typeof what === "string" ? { runId: what } : what,
        schema: replayResultView,
      }),
  };

  /** Call counters and latency percentiles (admin): see GET /v1/metrics. */
  metrics(): Promise<Metrics> {
    return this.#http.json("GET", "/v1/metrics", { schema: metricsView });
  }

  readonly capabilities = {
    list: async (): Promise<CapabilityStatus[]> =>
      (await this.#http.json("GET", "/v1/capabilities", { schema: capabilitiesView })).capabilities,
    /** Detects and verifies every capability again (admin). */
    refresh: async (): Promise<CapabilityStatus[]> =>
      (await this.#http.json("POST", "/v1/capabilities/refresh", { schema: capabilitiesView }))
        .capabilities,
  };

  constructor(options: ToolbusClientOptions) {
    this.#http = new Transport({
      baseUrl: options.baseUrl,
      ...(options.streamUrl !== undefined ? { streamUrl: options.streamUrl } : {}),
      apiKey: options.apiKey,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      headers: options.headers ?? {},
    });
  }

  #setEnabled(id: string, action: "enable" | "disable", options: RevisionOptions): Promise<Tool> {
    return this.#http.json("POST", `/v1/tools/${encodeURIComponent(id)}/${action}`, {
      schema: toolView,
      ...ifMatchHeaders(options),
    });
  }

  health(): Promise<Health> {
    return this.#http.json("GET", "/health", { schema: healthView });
  }

  /**
   * Calls a tool under a run. With `wait`, the finished call (succeeded or failed); when it
   * is still running after that, its current view (pending or running) to poll with getCall.
   */
  async call<T extends ToolId>(
    toolId: T,
    input: ToolInput<T>,
    options: CallOptions,
  ): Promise<CallView<T>> {
    const { runId, signal, ...rest } = options;
    const path = `/v1/runs/${encodeURIComponent(runId)}/calls`;
    const response = await this.#http.send("POST", path, {
      json: { tool: toolId, input, ...definedOnly(rest) },
      ...(signal ? { signal } : {}),
    });
    if (response.status === 202) {
      const accepted = await readJson(response, callAcceptedView);
      return this.getCall<T>(runId, accepted.callId, signal ? { signal } : {});
    }
    return (await readJson(response, callView)) as CallView<T>;
  }

  /** A call and, once finished, its result. Name the tool as `T` to type the result's data. */
  async getCall<T extends ToolId = string>(
    runId: string,
    callId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<CallView<T>> {
    const path = `/v1/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(callId)}`;
    return (await this.#http.json("GET", path, {
      schema: callView,
      ...(options.signal ? { signal: options.signal } : {}),
    })) as CallView<T>;
  }

  /**
   * Asks a call to stop (its caller, or an administrator). A call not started yet comes back
   * failed `cancelled`; a running one comes back still running, with `cancelRequestedAt`, and
   * ends `cancelled` unless it finishes first (follow it with getCall). A finished call is a
   * ToolbusApiError with status 409.
   */
  async cancelCall<T extends ToolId = string>(runId: string, callId: string): Promise<CallView<T>> {
    const path = `/v1/runs/${encodeURIComponent(runId)}/calls/${encodeURIComponent(callId)}/cancel`;
    return (await this.#http.json("POST", path, { schema: callView })) as CallView<T>;
  }

  /**
   * A run's events, in order: `for await (const event of client.events(runId)) ...`. Pages
   * through the log as JSON; with `follow`, keeps receiving new events until the loop is left
   * or `signal` fires.
   */
  events(runId: string, options: EventsOptions = {}): RunEventStream {
    return runEvents(this.#http, runId, options);
  }

  /**
   * The stage's events as they happen, every run's, filtered by an event pattern:
   * `for await (const { event, cursor } of client.stageEvents({ pattern })) ...`. Starts at
   * the end (only new events) unless `cursor` or `since` says where; reconnects with
   * Last-Event-ID whenever the server ends the stream, until the loop is left or `signal` fires.
   */
  stageEvents(options: StageEventsOptions = {}): StageEventStream {
    return stageEvents(this.#http, options);
  }

  /**
   * One JSON page of the stage's events. With a pattern it may be empty while `more` is true:
   * read again at once from its `cursor`.
   */
  stageEventsPage(options: StageEventsPageOptions = {}): Promise<StageEventsPage> {
    return stageEventsPage(this.#http, options);
  }

  /** Which tools a role may and can use in a mode, and why the others are left out. */
  select(request: SelectRequest = {}): Promise<Selection> {
    return this.#http.json("POST", "/v1/select", { json: request, schema: selectionView });
  }

  /** The optional-tools section of an agent's prompt, with its parts. */
  prompt(request: PromptRequest = {}): Promise<Prompt> {
    return this.#http.json("POST", "/v1/prompt", {
      json: { ...request, format: "json" },
      schema: promptView,
    });
  }

  /** An agent file for one harness, or `{ files }` for `harness: "all"`. */
  async renderAgent<H extends HarnessChoice>(
    request: RenderAgentRequest & { harness: H },
  ): Promise<RenderAgentResult<H>> {
    const rendered: unknown = await this.#http.json("POST", "/v1/agents/render", {
      json: request,
      schema: renderedAgentView,
    });
    return rendered as RenderAgentResult<H>;
  }
}

export function createToolbusClient(options: ToolbusClientOptions): ToolbusClient {
  return new ToolbusClient(options);
}

function registeredPath(name: string, action?: string): string {
  return `/v1/registered-toolsets/${encodeURIComponent(name)}${action ? `/${action}` : ""}`;
}

function connectionPath(provider: string): string {
  return `/v1/connections/${encodeURIComponent(provider)}`;
}

function subscriptionPath(id: string, action?: string): string {
  return `/v1/subscriptions/${encodeURIComponent(id)}${action ? `/${action}` : ""}`;
}

/** A revision number becomes the ETag the API gives (`"3"`); a string is sent as it is. */
function ifMatchHeaders(options: RevisionOptions): { headers?: Record<string, string> } {
  const revision = options.ifMatch;
  if (revision === undefined) return {};
  return { headers: { "if-match": typeof revision === "number" ? `"${revision}"` : revision } };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, entry]) => entry !== undefined),
  ) as Partial<T>;
}
