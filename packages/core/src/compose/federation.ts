import type { FederatedServer, McpFederation, RemoteMcpServers } from "../app/federation/service";
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
    readResource: async (principal, mode, uri) =>
      (await federation()).readResource(principal, mode, uri),
    getPrompt: async (principal, mode, name, args) =>
      (await federation()).getPrompt(principal, mode, name, args),
    complete: async (principal, mode, params) =>
      (await federation()).complete(principal, mode, params),
  };
}

/** The servers themselves, through registered/mcp-client. */
function remoteServers(pieces: FederationPieces, limit: number): RemoteMcpServers {
  const client = () => import("../registered/mcp-client");
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
    offerings: async (server) => (await client()).listRemoteOfferings(await connect(server), limit),
    readResource: async (server, uri) =>
      (await client()).readRemoteResource(await connect(server), uri),
    getPrompt: async (server, name, args) =>
      (await client()).getRemotePrompt(await connect(server), name, args),
    complete: async (server, params) =>
      (await client()).completeRemote(await connect(server), params),
  };
}
