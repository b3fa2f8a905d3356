import * as http from "node:http";
import { BlockList, isIP, type Socket } from "node:net";
import { OutboundError } from "./errors";
import type { OutboundConfig } from "./types";

/** The environment proxy variables are read from (process.env unless a test passes its own). */
export type ProxyEnv = Readonly<Record<string, string | undefined>>;

/** A forward proxy one request goes through. */
export interface ProxyRoute {
  /** host:port of the proxy, for messages and logs: never its credentials. */
  address: string;
  /** Its host name or address, without IPv6 brackets. */
  hostname: string;
  port: number;
  /** The Proxy-Authorization value, when the proxy URL carries credentials. */
  authorization?: string;
  /** Where the setting was read: `config:outbound.proxy`, `env:https_proxy`, ... */
  source: string;
}

/**
 * The proxy a request to `url` goes through, or undefined to go direct. Throws an
 * OutboundError when the setting that applies is not a usable proxy URL, so a mistyped
 * HTTPS_PROXY fails requests loudly instead of sending them somewhere else.
 */
export type ProxyChoice = (url: URL) => ProxyRoute | undefined;

const direct: ProxyChoice = () => undefined;

/**
 * Decides, once, where requests go. The stage's `outbound.proxy` wins over the environment:
 * set, HTTPS_PROXY, HTTP_PROXY and NO_PROXY are not read at all; `false` goes direct. Without
 * it, https: URLs use https_proxy / HTTPS_PROXY and http: URLs http_proxy / HTTP_PROXY (each
 * scheme its own variable, as curl reads them; no fallback from one to the other), NO_PROXY /
 * no_proxy lists what goes direct, and when both spellings of a variable are set the
 * lower-case one wins (curl's rule). An empty variable counts as unset.
 */
export function proxyChoice(
  setting: OutboundConfig["proxy"],
  env: ProxyEnv = process.env,
): ProxyChoice {
  if (setting === false) return direct;
  if (setting) {
    const route = parseProxyUrl(setting.url, "config:outbound.proxy");
    const bypass = noProxyMatcher(setting.noProxy ?? []);
    return (url) => (bypass(url) ? undefined : route());
  }
  const read = (name: string) => {
    for (const key of [name, name.toUpperCase()]) {
      const value = env[key]?.trim();
      if (value) return { value, key };
    }
    return undefined;
  };
  const https = read("https_proxy");
  const plain = read("http_proxy");
  if (!https && !plain) return direct;
  const routes = {
    "https:": https ? parseProxyUrl(https.value, `env:${https.key}`) : undefined,
    "http:": plain ? parseProxyUrl(plain.value, `env:${plain.key}`) : undefined,
  };
  const bypass = noProxyMatcher((read("no_proxy")?.value ?? "").split(/[\s,]+/));
  return (url) => {
    const route = routes[url.protocol as keyof typeof routes];
    return route && !bypass(url) ? route() : undefined;
  };
}

/**
 * Parses a proxy URL once; the returned function gives the route, or throws if it is not
 * usable. A value without a scheme (`proxy.corp:3128`) means http://, as curl reads it.
 */
function parseProxyUrl(text: string, source: string): () => ProxyRoute {
  const unusable = (why: string) => () => {
    // Never the value itself: it may carry a password.
    throw new OutboundError("network", `the proxy setting (${source}) ${why}`, {
      context: { proxySource: source },
    });
  };
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  } catch {
    return unusable("is not a URL");
  }
  if (url.protocol !== "http:") return unusable("must be an http:// URL");
  if (url.hostname === "") return unusable("names no host");
  const port = url.port === "" ? 80 : Number(url.port);
  const route: ProxyRoute = {
    address: `${url.hostname}:${port}`,
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port,
    source,
  };
  if (url.username !== "" || url.password !== "") {
    let credentials: string;
    try {
      credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    } catch {
      return unusable("has badly escaped credentials");
    }
    route.authorization = `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;
  }
  return () => route;
}

/** The port a URL connects to, its scheme's default when it names none. */
function portOf(url: URL): number {
  return url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
}

/** host:port as a request target or Host header writes it, IPv6 in brackets. */
export function authority(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * Whether a URL goes direct by NO_PROXY's entries: `*` (everything), a host name (itself and
 * every subdomain; a leading `.` or `*.` changes nothing), an IP address or CIDR range
 * (matched against an address literal in the URL, not what a name resolves to), each
 * optionally with `:port`. Matching is on the URL's host as written, like curl's.
 */
export function noProxyMatcher(entries: readonly string[]): (url: URL) => boolean {
  const rules: Array<{ port?: number; test: (host: string) => boolean }> = [];
  for (const raw of entries) {
    let text = raw.trim().toLowerCase();
    if (text === "") continue;
    if (text === "*") return () => true;
    let port: number | undefined;
    const withPort = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(text);
    if (withPort) {
      text = withPort[1] as string;
      port = Number(withPort[2]);
    }
    text = text.replace(/^\[(.*)\]$/, "$1");
    const [address, prefix] = text.split("/");
    const family = isIP(address ?? "");
    if (family !== 0) {
      const type = family === 6 ? "ipv6" : "ipv4";
      const list = new BlockList();
      const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
      if (!Number.isInteger(bits)) continue;
      try {
        list.addSubnet(address as string, bits, type);
      } catch {
        continue; // A malformed range sends nothing direct rather than breaking requests.
      }
      rules.push({ port, test: (host) => isIP(host) !== 0 && list.check(host, type) });
      continue;
    }
    const name = text.replace(/^\*?\.+/, "").replace(/\.$/, "");
    if (name === "" || name.includes("/")) continue;
    rules.push({ port, test: (host) => host === name || host.endsWith(`.${name}`) });
  }
  if (rules.length === 0) return () => false;
  return (url) => {
    const host = url.hostname
      .toLowerCase()
      .replace(/^\[(.*)\]$/, "$1")
      .replace(/\.$/, "");
    const port = portOf(url);
    return rules.some((rule) => (rule.port === undefined || rule.port === port) && rule.test(host));
  };
}

/**
 * Opens a CONNECT tunnel through `route` to `target` (host:port) and resolves with its socket
 * once the proxy answers 2xx. Rejects with a `network` OutboundError whose context carries
 * `detail`, why in a few words; `signal` tears everything down.
 */
export function openTunnel(
  route: ProxyRoute,
  target: string,
  signal: AbortSignal,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const fail = (
      detail: string,
      why: string,
      extra: Record<string, unknown> = {},
      cause?: unknown,
    ) =>
      reject(
        new OutboundError("network", `the proxy ${route.address} ${why}`, {
          cause,
          context: { proxy: route.address, target, detail, ...extra },
        }),
      );
    if (signal.aborted) {
      fail("aborted", "was not asked: the request was aborted");
      return;
    }
    const request = http.request({
      hostname: route.hostname,
      port: route.port,
      method: "CONNECT",
      path: target,
      headers: {
        host: target,
        ...(route.authorization ? { "proxy-authorization": route.authorization } : {}),
      },
      // Its own connection: a tunnel is never pooled.
      agent: false,
    });
    const onAbort = () => request.destroy();
    signal.addEventListener("abort", onAbort, { once: true });
    request.once("connect", (response, socket: Socket, head: Buffer) => {
      signal.removeEventListener("abort", onAbort);
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 299) {
        socket.destroy();
        const answer = `${status} ${response.statusMessage ?? ""}`.trim();
        fail(`the proxy answered ${answer}`, `refused the tunnel (${answer})`, { status });
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    request.once("error", (cause: NodeJS.ErrnoException) => {
      signal.removeEventListener("abort", onAbort);
      const code = cause.code ?? "error";
      fail(
        signal.aborted ? "aborted" : `the proxy could not be reached: ${code}`,
        `could not be reached (${code})`,
        {},
        cause,
      );
    });
    request.end();
  });
}
