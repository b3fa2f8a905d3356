import { createRequire } from "node:module";
import { type ServerProcess, startServerProcess } from "./server-process";

const require = createRequire(import.meta.url);
/** The package's own bin (dist/index.js), as published; `streamableHttp` picks the transport. */
const ENTRY = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");

/**
 * Loaded before the server: its Express app listens on `process.env.PORT` on every interface,
 * with no way to choose one. This binds that listener to loopback instead, and prints the
 * address it got (so PORT=0 works) as one JSON line, without touching the package.
 */
const LOOPBACK_PRELOAD = `data:text/javascript,${encodeURIComponent(`
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  if (typeof port !== "number" && typeof port !== "string") return listen.call(this, port, ...rest);
  this.once("listening", () => {
    console.log(JSON.stringify({ url: "http://127.0.0.1:" + this.address().port + "/mcp" }));
  });
  return listen.call(this, Number(port), "127.0.0.1", ...rest.filter((a) => typeof a === "function"));
};
`)}`;

export type EverythingServer = ServerProcess;

/**
 * The published reference server `@modelcontextprotocol/server-everything` over Streamable
 * HTTP (stateful: one session per initialize) in its own Node process on loopback, resolved
 * once it listens.
 */
export function startEverythingServer(): Promise<EverythingServer> {
  return startServerProcess(
    "server-everything",
    ["--import", LOOPBACK_PRELOAD, ENTRY, "streamableHttp"],
    { PORT: "0" },
  );
}
