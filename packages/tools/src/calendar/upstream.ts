import {
  failureFromOutbound,
  type HttpClient,
  type OutboundRequest,
  type OutboundResponse,
} from "@toolbus/core/outbound";
import { ToolFailure } from "@toolbus/core/tool-definition";
import { Failures } from "@toolbus/wire/model";

/** One request, with network-level failures already turned into the shared failure kinds. */
export async function send(
  upstream: string,
  http: HttpClient,
  url: string,
  request: OutboundRequest,
): Promise<OutboundResponse> {
  try {
    return await http.request(url, request);
  } catch (error) {
    throw failureFromOutbound(error, upstream);
  }
}

export function readJson(response: OutboundResponse): unknown {
  try {
    return response.json();
  } catch {
    return undefined;
  }
}

export function unreadable(upstream: string): ToolFailure {
  return new ToolFailure(
    Failures.upstreamError(`${upstream} sent a response this tool could not read.`),
  );
}
