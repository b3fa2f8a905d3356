import type {
  FederatedServer,
  FederationRound,
  McpFederation,
  RemoteMcpServers,
} from "../app/federation/service";
import type { SelectionService } from "../app/selection/service";
import type { HttpClient, SecretSource } from "../outbound/types";
import type { McpConnection } from "../registered/mcp-client";

/** How long one request to a registered server may take when `/mcp` federates it. */
const FEDERATION_TIMEOUT_MS = 10_000;

interface FederationPieces {
  selection: Pick<SelectionService, "select">;
  http: HttpClient;
  readSecrets(names: readonly string[]): Promise<SecretSource>;
}

/**
 * `/mcp`'s prompts, resources and completions from the registered MCP servers, over the
 * outbound client tools use, each server with its toolset's secret read at use. The
 * federation and the MCP SDK's client load with the first request that needs them: the API's
 * cold start carries neither.
 */
export function mcpFederation(pieces: FederationPieces): McpFederation {
  let loaded: Promise<McpFederation> | undefined;
  const federation = () => {
    loaded ??= import("../app/federation/service").then(
      ({ MAX_FEDERATED_ENTRIES, ServerFederation }) =>
        new ServerFederation({
          selection: pieces.selection,
          remote: remoteServers(pieces, MAX_FEDERATED_ENTRIES),
        }),
    );
    return loaded;
  };
  return {
    prompts: async (principal, mode) => (await federation()).prompts(principal, mode),
    resources: async (principal, mode) => (await federation()).resources(principal, mode),
    resourceTemplates: async (principal, mode) =>
      (await federation()).resourceTemplates(principal, mode),
    readResource: async (principal, mode, uri, round) =>
      (await federation()).readResource(principal, mode, uri, round),
    getPrompt: async (principal, mode, name, args, round) =>
      (await federation()).getPrompt(principal, mode, name, args, round),
    complete: async (principal, mode, params) =>
      (await federation()).complete(principal, mode, params),
  };
}

/**
 * The servers themselves, through registered/mcp-client. Lists go over the newest generation a
 * server speaks; a read, a prompt or a completion over its caller's when the server speaks it
 * (else the server's newest), and 2025-11-25 when the caller's is not given, as before.
 */
function remoteServers(pieces: FederationPieces, limit: number): RemoteMcpServers {
  const client = () => import("../registered/mcp-client");
  const protocol = async (server: FederatedServer, round: FederationRound | undefined) =>
    (await client()).protocolFor(
      { era: round?.protocol === "2026-07-28" ? "modern" : "legacy" },
      server,
    );
  const inRound = async (server: FederatedServer, round: FederationRound | undefined) => ({
    ...round,
    protocol: await protocol(server, round),
  });
  const connect = async (server: FederatedServer): Promise<McpConnection> => {
    const [{ mcpConnection }, secret] = await Promise.all([
      client(),
      pieces.readSecrets(server.auth ? [server.auth.secret] : []),
    ]);
    return mcpConnection(
      server,
      { secret, http: pieces.http },
      { owner: `toolset ${server.toolset}`, timeoutMs: FEDERATION_TIMEOUT_MS },
    );
  };
  return {
    offerings: async (server) => {
      const { listRemoteOfferings, newestProtocol } = await client();
      return listRemoteOfferings(await connect(server), limit, {
        protocol: newestProtocol(server),
      });
    },
    readResource: async (server, uri, round) =>
      (await client()).readRemoteResource(await connect(server), uri, await inRound(server, round)),
    getPrompt: async (server, name, args, round) =>
      (await client()).getRemotePrompt(
        await connect(server),
        name,
        args,
        await inRound(server, round),
      ),
    complete: async (server, params) =>
      (await client()).completeRemote(await connect(server), params, {
        protocol: await protocol(server, undefined),
      }),
  };
}
