import {
  failureFromOutbound,
  failureFromStatus,
  type HttpClient,
  type OutboundRequest,
  type OutboundResponse,
} from "@toolbus/core/outbound";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";

export const PROVIDERS = ["duckduckgo", "brave", "searxng"] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * The secret holding a Brave Search API key. Here rather than with Brave's provider, so the
 * tool's definition and its capability name it without loading any provider.
 */
export const SEARCH_API_KEY = "SEARCH_API_KEY";

export const RECENCIES = ["day", "week", "month", "year", "any"] as const;
export type Recency = (typeof RECENCIES)[number];

export interface SearchOptions {
  maxResults: number;
  recency: Recency;
}

/** One hit as a provider reports it, before URL checks and de-duplication. */
export interface RawSearchResult {
  title: string;
  url: string;
  snippet: string;
}

/** A results page is tens of kilobytes; anything near this is not one. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

/** What a provider may use from the tool's context: the network, secrets, the call's signal. */
export interface SearchContext {
  http: HttpClient;
  secret(name: string): string | undefined;
  signal: AbortSignal;
}

/** A search engine behind web_search. Providers fail with ToolFailure, never anything else. */
export interface SearchProvider {
  readonly name: ProviderName;
  /** How failures and text output name the provider. */
  readonly label: string;
  search(query: string, options: SearchOptions, context: SearchContext): Promise<RawSearchResult[]>;
}

/**
 * A request whose transport failures and non-2xx answers become the shared failure kinds.
 * `failureFor` may read a status first where a provider's answer means something specific.
 */
export async function requestUpstream(
  context: SearchContext,
  label: string,
  url: string,
  request: OutboundRequest,
  failureFor?: (response: OutboundResponse) => ToolFailure | undefined,
): Promise<OutboundResponse> {
  let response: OutboundResponse;
  try {
    response = await context.http.request(url, {
      maxBytes: MAX_RESPONSE_BYTES,
      ...request,
      signal: context.signal,
    });
  } catch (error) {
    throw failureFromOutbound(error, label);
  }
  const failure = failureFor?.(response) ?? failureFromStatus(response, label);
  if (failure) throw failure;
  return response;
}

/** The body as JSON, or the failure every provider gives for a body it cannot read. */
export function jsonBody(response: OutboundResponse, label: string): unknown {
  try {
    return response.json();
  } catch (error) {
    throw unreadable(label, error);
  }
}

export function unreadable(label: string, cause?: unknown): ToolFailure {
  return new ToolFailure(
    Failures.upstreamError(`${label} returned a response Toolbus could not read.`),
    { cause },
  );
}
