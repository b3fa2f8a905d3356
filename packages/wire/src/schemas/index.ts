// The REST API's request bodies, queries and views, in plain zod: the API declares its routes
// with them (adding only route metadata) and the typed client parses answers with them. A
// schema the OpenAPI document names carries its component id (`.meta({ id })`).
export { agentFileView, HARNESSES, renderedAgentView } from "./agents";
export { auditPageView, auditQuery } from "./audit";
export {
  callAcceptedView,
  callBody,
  callView,
  traceCallsView,
  traceQuery,
} from "./calls";
export { capabilitiesView } from "./capabilities";
export {
  toolAvailabilityBody,
  toolBody,
  toolListItemView,
  toolListView,
  toolsetBody,
  toolsetListView,
  toolsetView,
  toolsetWithToolsView,
  toolsQuery,
  toolView,
} from "./catalog";
export {
  connectBody,
  connectionListView,
  connectionProviderName,
  connectionProvidersView,
  connectionProviderView,
  connectionsQuery,
  connectionView,
  connectLinkView,
  disconnectedView,
  disconnectQuery,
} from "./connections";
export { errorBody } from "./error-body";
export {
  runEventPageView,
  runEventsQuery,
  runEventView,
  stageEventPageView,
  stageEventsQuery,
  typedRunEvent,
} from "./events";
export { healthView } from "./health";
export { apiKeyBody, apiKeyCreatedView, apiKeyListView, apiKeyView } from "./keys";
export { meView } from "./me";
export { metricsView } from "./metrics";
export {
  catalogDiffView,
  heldChangeView,
  heldSummaryView,
  refreshBody,
  registeredToolsetBody,
  registrationOutcomeView,
  removedToolsetView,
  reviewDecisionBody,
  reviewDecisionView,
  toolsetReviewView,
} from "./registered";
export {
  approvalDecisionBody,
  approvalsQuery,
  approvalsView,
  runPoliciesView,
  runPolicyBody,
  runView,
} from "./runs";
export {
  DEFAULT_SEARCH_LIMIT,
  MAX_QUERY_CHARS,
  MAX_SEARCH_LIMIT,
  SEARCH_FIELDS,
  searchLimit,
  searchQuery,
  toolSearchBody,
  toolSearchQuery,
  toolSearchView,
} from "./search";
export {
  promptBody,
  promptToolView,
  promptView,
  selectBody,
  selectionFields,
  selectionView,
} from "./selection";
export {
  failuresPageView,
  failuresQuery,
  redriveBody,
  redriveResultView,
  replayBody,
  replayResultView,
  subscriptionBody,
  subscriptionListView,
  subscriptionView,
  subscriptionWithSecretView,
} from "./subscriptions";
