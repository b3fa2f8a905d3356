/**
 * A registered MCP server answered a request with a JSON-RPC error (an unknown prompt, a
 * missing argument, a resource it does not have), as opposed to not answering at all: the
 * gateway passes the server's words on rather than calling it unreachable. Its own module, so
 * the application layer can tell it apart without loading the MCP SDK.
 */
export class RemoteRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly upstream: string,
  ) {
    super(message.slice(0, 1000));
    this.name = "RemoteRefusal";
  }
}
