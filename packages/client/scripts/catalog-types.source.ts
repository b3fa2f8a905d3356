// The types the client takes from @toolbus/wire, @toolbus/harness and @toolbus/tools.
// scripts/generate-types.ts prints each one written out in full into
// src/generated/catalog-types.ts, so the published client carries them without depending on
// the (unpublished) workspace packages.
import type { renderRequest } from "@toolbus/harness";
import type { calendarInput, calendarOutput } from "@toolbus/tools/calendar";
import type { githubInput, githubOutput } from "@toolbus/tools/github";
import type { linkValidatorInput, linkValidatorOutput } from "@toolbus/tools/link-validator";
import type { readabilityInput, readabilityOutput } from "@toolbus/tools/readability";
import type { rssFeedInput, rssFeedOutput } from "@toolbus/tools/rss-feed";
import type { staticLinksInput, staticLinksOutput } from "@toolbus/tools/static-links";
import type { webSearchInput, webSearchOutput } from "@toolbus/tools/web-search";
import type {
  CallResult,
  CapabilityStatus,
  Category,
  Citation,
  Delivery,
  Failure,
  HttpToolRegistrationInput,
  HttpToolsetRegistrationInput,
  McpToolDefaultsInput,
  McpToolsetRegistrationInput,
  Principal,
  RunPolicy,
  SecretHeaderInput,
  Subscription,
  SubscriptionTarget,
  subscriptionRequest,
  ToolCallApprovalRequested,
  ToolCallProgress,
  ToolCallScheduled,
  ToolResultReceived,
  ToolSpec,
  ToolsetRegistrationInput,
  ToolsetSpec,
} from "@toolbus/wire/model";
import type { Approval } from "@toolbus/wire/model/call";
import type {
  agentFileView,
  apiKeyCreatedView,
  apiKeyView,
  callView,
  catalogDiffView,
  connectionProviderView,
  connectionView,
  connectLinkView,
  disconnectedView,
  failuresPageView,
  HARNESSES,
  healthView,
  heldChangeView,
  heldSummaryView,
  metricsView,
  promptToolView,
  promptView,
  registrationOutcomeView,
  removedToolsetView,
  replayResultView,
  reviewDecisionView,
  runPoliciesView,
  runView,
  selectionView,
  stageEventPageView,
  subscriptionWithSecretView,
  toolAvailabilityBody,
  toolListItemView,
  toolSearchView,
  toolsetReviewView,
  toolsetView,
  toolsetWithToolsView,
  toolView,
  typedRunEvent,
} from "@toolbus/wire/schemas";
import type { z } from "zod";

export type {
  CallResult,
  CapabilityStatus,
  Category,
  Citation,
  Delivery,
  Failure,
  HttpToolRegistrationInput,
  HttpToolsetRegistrationInput,
  McpToolDefaultsInput,
  McpToolsetRegistrationInput,
  Principal,
  RunPolicy,
  SecretHeaderInput,
  Subscription,
  SubscriptionTarget,
  ToolCallApprovalRequested,
  ToolCallProgress,
  ToolCallScheduled,
  ToolResultReceived,
  ToolSpec,
  ToolsetRegistrationInput,
  ToolsetSpec,
};
/** A call's approval: when it was asked for, until when it waits, and the decision once made. */
export type CallApproval = Approval;
/** The body of `POST /v1/agents/render` as a caller writes it. */
export type RenderAgentRequest = z.input<typeof renderRequest>;
/** What `POST /v1/subscriptions` takes. */
export type SubscriptionRequest = z.input<typeof subscriptionRequest>;
/** The body of `PUT /v1/tools/{id}/availability`: who may use the tool, where. */
export type ToolAvailabilityInput = z.input<typeof toolAvailabilityBody>;

// The API's views, as @toolbus/wire/schemas declares them (and the API documents them).
export type ApiKeyRecord = z.output<typeof apiKeyView>;
export type CatalogDiff = z.output<typeof catalogDiffView>;
export type Connection = z.output<typeof connectionView>;
export type ConnectionProvider = z.output<typeof connectionProviderView>;
export type ConnectLink = z.output<typeof connectLinkView>;
export type CreatedApiKey = z.output<typeof apiKeyCreatedView>;
export type Disconnected = z.output<typeof disconnectedView>;
export type FailuresPage = z.output<typeof failuresPageView>;
export type Harness = (typeof HARNESSES)[number];
export type Health = z.output<typeof healthView>;
export type HeldSummary = z.output<typeof heldSummaryView>;
export type HeldToolChange = z.output<typeof heldChangeView>;
export type Metrics = z.output<typeof metricsView>;
export type Prompt = z.output<typeof promptView>;
export type PromptTool = z.output<typeof promptToolView>;
export type RegistrationOutcome = z.output<typeof registrationOutcomeView>;
export type RenderedAgentFile = z.output<typeof agentFileView>;
export type ReplayResult = z.output<typeof replayResultView>;
export type ReviewDecision = z.output<typeof reviewDecisionView>;
export type Run = z.output<typeof runView>;
export type RunEvent = z.output<typeof typedRunEvent>;
export type RunPolicies = z.output<typeof runPoliciesView>;
export type Selection = z.output<typeof selectionView>;
export type StageEventsPage = Omit<z.output<typeof stageEventPageView>, "events"> & {
  events: RunEvent[];
};
export type SubscriptionWithSecret = z.output<typeof subscriptionWithSecretView>;
export type Tool = z.output<typeof toolView>;
export type ToolListItem = z.output<typeof toolListItemView>;
export type ToolSearch = z.output<typeof toolSearchView>;
export type Toolset = z.output<typeof toolsetView>;
export type ToolsetRemoved = z.output<typeof removedToolsetView>;
export type ToolsetReview = z.output<typeof toolsetReviewView>;
export type ToolsetWithTools = z.output<typeof toolsetWithToolsView>;
/** A call as the API shows it, its result untyped: `CallView` types it by tool. */
export type WireCallView = z.output<typeof callView>;

// Built-in tools: what a caller sends (zod's input type: defaults may be left out) and the
// `data` of a succeeded call.
export type CalendarInput = z.input<typeof calendarInput>;
export type CalendarOutput = z.output<typeof calendarOutput>;
export type GithubInput = z.input<typeof githubInput>;
export type GithubOutput = z.output<typeof githubOutput>;
export type LinkValidatorInput = z.input<typeof linkValidatorInput>;
export type LinkValidatorOutput = z.output<typeof linkValidatorOutput>;
export type ReadabilityInput = z.input<typeof readabilityInput>;
export type ReadabilityOutput = z.output<typeof readabilityOutput>;
export type RssFeedInput = z.input<typeof rssFeedInput>;
export type RssFeedOutput = z.output<typeof rssFeedOutput>;
export type StaticLinksInput = z.input<typeof staticLinksInput>;
export type StaticLinksOutput = z.output<typeof staticLinksOutput>;
export type WebSearchInput = z.input<typeof webSearchInput>;
export type WebSearchOutput = z.output<typeof webSearchOutput>;
