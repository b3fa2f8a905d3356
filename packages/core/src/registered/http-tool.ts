import type { Failure } from "@toolbus/wire/model/call";
import type { HttpImplementation } from "@toolbus/wire/model/implementation";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import { failureFromOutbound, failureFromStatus } from "../outbound/failures";
import type { OutboundResponse } from "../outbound/types";
import { type AnyToolDefinition, type ToolContext, ToolFailure } from "../tool-definition";
import { jsonSchemaType, textForModel } from "./schema-type";
import { authHeaders } from "./secrets";
import { expandUrlTemplate, queryValues } from "./url-template";

const WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/** A registered HTTP tool as a tool definition: the generic handler runs it like any other. */
export function httpToolDefinition(spec: ToolSpec): AnyToolDefinition {
  const implementation = spec.implementation;
  if (implementation.kind !== "http") throw new Error(`${spec.id} is not an http tool.`);
  return {
    spec,
    catalogSpec: spec,
    input: jsonSchemaType(spec.inputSchema),
    output: jsonSchemaType(spec.outputSchema),
    execute: (input, context) => callHttpTool(spec, implementation, input, context),
  };
}

async function callHttpTool(
  spec: ToolSpec,
  implementation: HttpImplementation,
  input: unknown,
  context: ToolContext<unknown>,
) {
  const fields = (input ?? {}) as Record<string, unknown>;
  let request: ReturnType<typeof expandUrlTemplate>;
  try {
    request = expandUrlTemplate(implementation.url, fields);
  } catch (error) {
    throw failure("internal", `${spec.id}: ${(error as Error).message}`, "correct_call");
  }
  const { url, rest } = request;
  const upstream = `${spec.toolset} (${url.host})`;
  const withBody = WITH_BODY.has(implementation.method);
  if (!withBody) {
    for (const [name, value] of Object.entries(rest)) {
      for (const item of queryValues(value, name)) url.searchParams.append(name, item);
    }
  }
  const headers: Record<string, string> = {
    accept: "application/json, text/plain;q=0.9, */*;q=0.1",
    ...authHeaders(implementation.auth, context.secret, spec.id),
    ...(withBody ? { "content-type": "application/json" } : {}),
  };
  let response: OutboundResponse;
  try {
    response = await context.http.request(url.toString(), {
      method: implementation.method,
      headers,
      ...(withBody ? { body: JSON.stringify(rest) } : {}),
      signal: context.signal,
      // Reads are retried by the client; a write is sent once unless it is declared idempotent.
      ...(spec.annotations.idempotent ? { retries: 2 } : {}),
    });
  } catch (error) {
    throw failureFromOutbound(error, upstream);
  }
  const refused = failureFromStatus(response, upstream);
  if (refused) throw refused;
  const data = bodyData(response, upstream);
  const text = typeof data === "string" ? data : readableJson(data, upstream);
  return {
    output: textForModel(text || `${spec.id} succeeded with an empty answer.`),
    data,
  };
}

/** JSON when the upstream says so, text otherwise, null for an empty answer. */
function bodyData(response: OutboundResponse, upstream: string): unknown {
  if (response.body.byteLength === 0) return null;
  const type = response.headers.get("content-type") ?? "";
  if (!/[/+]json\b/i.test(type)) return response.text();
  try {
    return response.json();
  } catch {
    throw failure("invalid_output", `${upstream} answered with malformed JSON.`, "replan");
  }
}

/** Data as indented JSON for a model; JSON nested past what can be written out is refused. */
function readableJson(data: unknown, upstream: string): string {
  try {
    return JSON.stringify(data, null, 2);
  } catch {
    throw failure("invalid_output", `${upstream} answered with JSON nested too deeply.`, "replan");
  }
}

function failure(kind: Failure["kind"], message: string, recovery: Failure["recovery"]) {
  return new ToolFailure({ kind, message, retryable: false, recovery });
}
