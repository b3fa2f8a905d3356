import { fileURLToPath } from "node:url";
import { type ServerProcess, startServerProcess } from "./server-process";

const FIXTURE_DIR = fileURLToPath(new URL("../fixtures/mcp-conformance/", import.meta.url));

export type ReferenceServer = ServerProcess;

/**
 * The conformance suite's reference MCP server (test/fixtures/mcp-conformance) in its own Node
 * process on loopback, resolved once it listens. It runs under this project's Node, through
 * tsx, with the fixture's own compiler settings: the copy is compiled as its authors compile
 * it, so it never has to be edited to suit this project's stricter options.
 */
export function startReferenceServer(port = 0): Promise<ReferenceServer> {
  return startServerProcess(
    "The reference server",
    ["--import", "tsx", `${FIXTURE_DIR}serve.ts`, String(port)],
    { TSX_TSCONFIG_PATH: `${FIXTURE_DIR}tsconfig.json` },
  );
}
