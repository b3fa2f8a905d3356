import { randomUUID } from "node:crypto";
import { EventBridgeApiError } from "./errors";
import type { LocalEventBus } from "./service";

export interface ProtocolResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

const TARGET_PREFIX = "AWSEvents.";
/** Operations only the local bus has (dead letters); never sent to AWS. */
const LOCAL_PREFIX = "ToolbusLocal.";

/**
 * EventBridge's JSON 1.1 protocol: the operation rides in `X-Amz-Target: AWSEvents.<Op>`,
 * input and output are JSON, errors carry `__type`. Shared by the HTTP server and the
 * in-process SDK handler so they cannot drift apart.
 */
export async function answerJsonRequest(
  bus: LocalEventBus,
  target: string | undefined,
  body: string,
): Promise<ProtocolResponse> {
  try {
    if (target?.startsWith(TARGET_PREFIX)) {
      return reply(200, await bus.dispatch(target.slice(TARGET_PREFIX.length), parseBody(body)));
    }
    if (target?.startsWith(LOCAL_PREFIX)) {
      const operation = target.slice(LOCAL_PREFIX.length);
      return reply(200, await bus.dispatchLocal(operation, parseBody(body)));
    }
    throw new EventBridgeApiError(
      "UnknownOperationException",
      "Missing or malformed X-Amz-Target header; expected AWSEvents.<Operation>.",
    );
  } catch (error) {
    if (error instanceof EventBridgeApiError) return errorReply(error);
    // Never leak internals: the SDK only needs to know it may retry.
    return reply(500, { __type: "InternalException", message: "Internal error in the local bus." });
  }
}

/** An error as EventBridge's JSON protocol carries it: the SDK reads `__type`. */
export function errorReply(error: EventBridgeApiError): ProtocolResponse {
  return reply(error.statusCode, { __type: error.type, message: error.message });
}

function parseBody(body: string): unknown {
  if (body.trim() === "") return {};
  try {
    return JSON.parse(body);
  } catch {
    throw new EventBridgeApiError("SerializationException", "The request body is not valid JSON.");
  }
}

function reply(statusCode: number, payload: unknown): ProtocolResponse {
  return {
    statusCode,
    headers: {
      "content-type": "application/x-amz-json-1.1",
      "x-amzn-requestid": randomUUID(),
    },
    body: JSON.stringify(payload),
  };
}
