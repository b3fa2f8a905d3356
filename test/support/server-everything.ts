import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
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

export interface EverythingServer {
  /** Its Streamable HTTP endpoint: http://127.0.0.1:<port>/mcp */
  url: string;
  pid: number;
  /** The last lines it printed, for a failure message. */
  output(): string;
  close(): Promise<void>;
}

/**
 * The published reference server `@modelcontextprotocol/server-everything` over Streamable
 * HTTP (stateful: one session per initialize) in its own Node process on loopback, resolved
 * once it listens.
 */
export async function startEverythingServer(): Promise<EverythingServer> {
  const child = spawn(process.execPath, ["--import", LOOPBACK_PRELOAD, ENTRY, "streamableHttp"], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    // Bounded: the server logs every request, and only the end explains a failure.
    if (tail.length > 200) tail.shift();
  };
  // Both streams are always read, so a chatty server never blocks on a full pipe.
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", remember);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server-everything did not listen within 60 s:\n${tail.join("\n")}`));
    }, 60_000);
    lines.on("line", (line) => {
      remember(line);
      if (!line.startsWith('{"url":')) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { url: string }).url);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited before listening:\n${tail.join("\n")}`));
    });
  });

  return {
    url,
    pid: child.pid as number,
    output: () => tail.join("\n"),
    close: () => stop(child, exited),
  };
}

/** SIGTERM, then SIGKILL if it is still there after a few seconds. */
async function stop(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
