import {
  type CompleteResult,
  type GetPromptResult,
  type ListResourceTemplatesResult,
  type Prompt,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
  type Server,
} from "@modelcontextprotocol/server";
import type { FederatedList, McpFederation } from "@toolbus/core/app/federation/service";
import type { McpSubscriptions } from "@toolbus/core/ports";
import type { Principal } from "@toolbus/wire/model/call";
import { type McpRelay, passRound, serverRound } from "./relayed-call";
import { contentsHash, MAX_SUBSCRIBED_URI } from "./subscriptions";

/** Where a federated list names the toolsets whose server did not answer (left out). */
const UNREACHABLE_META = "toolbus/unreachable";
/** Where a federated list names the toolsets whose list was cut at the bound. */
const TRUNCATED_META = "toolbus/truncated";

/**
 * The registered MCP servers' prompts, resources and completions on this request's server:
 * every answer is the federation's (core app/federation), asked for this caller and mode.
 * Lists come whole, in one page: a cursor is never handed out, so one sent is refused.
 */
export function federate(
  server: Server,
  federation: McpFederation,
  options: {
    /** Who asks, and in which (resolved) mode. */
    caller: { principal: Principal; mode: string };
    /** Throws the refusal when the caller may not read the catalog. */
    allowed(permission: "read" | "call"): void;
    /** Any failure as the protocol error the caller sees. */
    failure(error: unknown): ProtocolError;
    /** The request's generation: a server is asked in it when it speaks it. */
    era: "legacy" | "modern";
    /** How a server's `input_required` round reaches the caller (sealed state). */
    relay?: McpRelay;
    /**
     * Where `resources/subscribe` keeps the caller's subscriptions (2025-11-25; its changes
     * reach the caller on the `GET /mcp` stream, subscriptions.ts). Without it, none.
     */
    subscriptions?: McpSubscriptions;
  },
): void {
  const { principal, mode } = options.caller;
  // Lists need `read`, as tools/list does. Reading a resource, getting a prompt or completing
  // asks the server itself with the toolset's credential, so it needs `call`, as tools/call.
  const answer = async <T>(
    cursor: string | undefined,
    work: () => Promise<T>,
    permission: "read" | "call" = "read",
  ): Promise<T> => {
    options.allowed(permission);
    if (cursor !== undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        "Unknown cursor: this server answers every list in one page.",
      );
    }
    try {
      return await work();
    } catch (error) {
      throw options.failure(error);
    }
  };

  server.setRequestHandler("prompts/list", (request) =>
    answer(request.params?.cursor, async () => {
      const list = await federation.prompts(principal, mode);
      return { prompts: list.items as Prompt[], ...listMeta(list) };
    }),
  );
  server.setRequestHandler("resources/list", (request) =>
    answer(request.params?.cursor, async () => {
      const list = await federation.resources(principal, mode);
      return { resources: list.items as Resource[], ...listMeta(list) };
    }),
  );
  server.setRequestHandler("resources/templates/list", (request) =>
    answer(request.params?.cursor, async () => {
      const list = await federation.resourceTemplates(principal, mode);
      return {
        resourceTemplates: list.items as ListResourceTemplatesResult["resourceTemplates"],
        ...listMeta(list),
      };
    }),
  );
  server.setRequestHandler("resources/read", (request, ctx) => {
    const { uri } = request.params;
    return answer(
      undefined,
      async () => {
        const target = `resources/read ${uri}`;
        const round = serverRound(ctx, options.era, target);
        const result = await federation.readResource(principal, mode, uri, round);
        if (result) return passRound(options.relay, ctx, target, result as ReadResourceResult);
        // -32602 with the uri on both generations: the SDK answers 2025-11-25's -32002 as
        // -32602 too (the 2026-07-28 rule; clients of either accept it).
        throw new ResourceNotFoundError(uri);
      },
      "call",
    );
  });
  const { subscriptions } = options;
  if (subscriptions && options.era === "legacy") {
    // Subscribing asks the resource's server (as a read does, so `call`): only a resource the
    // caller can read now may be subscribed to, and its contents then are what a change is
    // measured against.
    server.setRequestHandler("resources/subscribe", (request) => {
      const { uri } = request.params;
      return answer(
        undefined,
        async () => {
          if (uri.length > MAX_SUBSCRIBED_URI) {
            throw new ProtocolError(
              ProtocolErrorCode.InvalidParams,
              `A subscribed URI has at most ${MAX_SUBSCRIBED_URI} characters.`,
              { uri: uri.slice(0, 100) },
            );
          }
          const result = await federation.readResource(principal, mode, uri);
          if (!result) throw new ResourceNotFoundError(uri);
          const outcome = await subscriptions.subscribe(principal.id, uri, contentsHash(result));
          if (!outcome.subscribed) {
            throw new ProtocolError(
              ProtocolErrorCode.InvalidParams,
              `This key already holds ${outcome.limit} resource subscriptions, the most it may: unsubscribe from one first.`,
              { uri, limit: outcome.limit },
            );
          }
          return {};
        },
        "call",
      );
    });
    // Unknown or already gone: answered the same.
    server.setRequestHandler("resources/unsubscribe", (request) => {
      const { uri } = request.params;
      return answer(
        undefined,
        async () => {
          if (uri.length <= MAX_SUBSCRIBED_URI) await subscriptions.unsubscribe(principal.id, uri);
          return {};
        },
        "call",
      );
    });
  }
  server.setRequestHandler("prompts/get", (request, ctx) => {
    const { name, arguments: args } = request.params;
    return answer(
      undefined,
      async () => {
        const target = `prompts/get ${name}`;
        const round = serverRound(ctx, options.era, target);
        const result = await federation.getPrompt(principal, mode, name, args, round);
        if (result) return passRound(options.relay, ctx, target, result as GetPromptResult);
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${name}.`);
      },
      "call",
    );
  });
  server.setRequestHandler("completion/complete", (request) => {
    const { ref, argument, context } = request.params;
    return answer(
      undefined,
      async () => {
        const result = await federation.complete(principal, mode, {
          ref,
          argument,
          ...(context ? { context } : {}),
        });
        if (result) return result as CompleteResult;
        const what = ref.type === "ref/prompt" ? `prompt ${ref.name}` : `resource ${ref.uri}`;
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown ${what}.`);
      },
      "call",
    );
  });
}

function listMeta(list: FederatedList): { _meta?: Record<string, unknown> } {
  const meta: Record<string, unknown> = {
    ...(list.unreachable.length > 0 ? { [UNREACHABLE_META]: list.unreachable } : {}),
    ...(list.truncated.length > 0 ? { [TRUNCATED_META]: list.truncated } : {}),
  };
  return Object.keys(meta).length > 0 ? { _meta: meta } : {};
}
