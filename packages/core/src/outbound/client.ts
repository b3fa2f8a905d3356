import { lookup as dnsLookup } from "node:dns/promises";
import type { IncomingMessage } from "node:http";
import * as http from "node:http";
import * as https from "node:https";
import { isIP, type LookupFunction, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as tls from "node:tls";
import * as zlib from "node:zlib";
import { OutboundError } from "./errors";
import { retryAfter } from "./failures";
import type { ProxyChoice, ProxyEnv, ProxyRoute } from "./proxy";
import { checkUrl, type ResolvedAddress, type Resolver } from "./ssrf";
import type {
  HttpClient,
  OutboundConfig,
  OutboundRequest,
  OutboundResponse,
  OutboundStream,
  OutboundStreamRequest,
} from "./types";

export interface HttpClientOptions {
  /** Resolves host names; defaults to the system resolver (node:dns `lookup`). */
  lookup?: Resolver;
  /** Where HTTPS_PROXY, HTTP_PROXY and NO_PROXY are read unless the config sets `proxy`. */
  env?: ProxyEnv;
}

const DEFAULT_RETRIES = 2;
const DEFAULT_MAX_REDIRECTS = 5;
const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 5_000;
/** Longer Retry-After waits are the caller's decision: the response goes back instead. */
const MAX_RETRY_AFTER_MS = 10_000;
const ACCEPT_ENCODING = "gzip, deflate, br";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/**
 * The only caller headers that follow a redirect to another origin. An allow-list, not a
 * deny-list: upstreams put API keys in headers of every name (X-Subscription-Token, X-Api-Key,
 * ...), and none of them may reach a host the caller did not name.
 */
const CROSS_ORIGIN_HEADERS = new Set([
  "accept",
  "accept-language",
  "accept-encoding",
  "user-agent",
]);

/** Abort reasons of an attempt's controller: which one fired decides the error kind. */
const TIMED_OUT = Symbol("timed out");
const CALLER_ABORTED = Symbol("caller aborted");
/** A streamed body's idle timeout fired. */
const IDLE = Symbol("idle");
/** The reader cancelled a streamed body: nobody is left to tell. */
const CANCELLED = Symbol("cancelled");

export const systemLookup: Resolver = async (hostname) => {
  const results = await dnsLookup(hostname, { all: true, verbatim: true });
  return results.map(
    (entry): ResolvedAddress => ({
      address: entry.address,
      family: entry.family === 6 ? 6 : 4,
    }),
  );
};

/**
 * The one HTTP client tools use. Every hop is checked by the SSRF guard before connecting and
 * the connection goes to the address that was checked; bodies are capped after decompression.
 * Through a forward proxy (see ./proxy) the guard still judges the target: its name is
 * resolved and checked here first, then the proxy is asked by name (domain-filtering proxies
 * refuse bare addresses). The proxy resolves the name again, so a name that answers the
 * guard with a public address and the proxy with a private one reaches what the proxy may
 * reach: behind a proxy, the proxy's own policy is the last line for rebinding names.
 */
export function createHttpClient(
  config: OutboundConfig,
  options: HttpClientOptions = {},
): HttpClient {
  const lookup = options.lookup ?? systemLookup;
  const proxy = proxyChooser(config, options.env ?? process.env);
  return {
    request: (url, request = {}) => send(config, lookup, proxy, url, request),
    open: (url, request = {}) => openStream(config, lookup, proxy, url, request),
  };
}

/**
 * Where a request goes, by the stage's proxy setting or the environment's: the proxy code is
 * loaded only where a proxy may apply (a lazy chunk in a split bundle). The client and its
 * probe (./probe) route alike through it.
 */
export function proxyChooser(config: OutboundConfig, env: ProxyEnv): () => Promise<ProxyChoice> {
  const configured =
    config.proxy !== undefined
      ? config.proxy !== false
      : PROXY_VARIABLES.some((name) => env[name]?.trim());
  let choice: Promise<ProxyChoice> | undefined;
  return () =>
    (choice ??= configured
      ? import("./proxy").then((module) => module.proxyChoice(config.proxy, env))
      : Promise.resolve(() => undefined));
}

/** What ./proxy reads when the config names no proxy (NO_PROXY alone sends nothing anywhere). */
const PROXY_VARIABLES = ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"];

/** How every hop of one request is sent: what `request` and `open` share. */
interface Hops {
  config: OutboundConfig;
  lookup: Resolver;
  proxy: () => Promise<ProxyChoice>;
  method: NonNullable<OutboundRequest["method"]>;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  followRedirects: boolean;
  maxRedirects: number;
}

interface Settings extends Hops {
  maxBytes: number;
}

interface Answer {
  status: number;
  headers: Headers;
  url: string;
  redirects: string[];
  body: Uint8Array;
}

/** Where a redirect chain ended: the final answer's headers, its body not read yet. */
interface Arrival {
  pending: Pending;
  url: string;
  redirects: string[];
  context: Record<string, unknown>;
}

type Outgoing = { method: string; headers: Record<string, string>; body: string | undefined };

/** Fails before any work when nothing may leave the machine or the caller gave up already. */
function preflight(config: OutboundConfig, signal: AbortSignal | undefined): void {
  if (!config.networkEnabled) {
    throw new OutboundError("network", "outbound network access is disabled on this stage");
  }
  if (signal?.aborted) throw callerAborted();
}

function hopsOf(
  config: OutboundConfig,
  lookup: Resolver,
  proxy: () => Promise<ProxyChoice>,
  request: OutboundRequest | OutboundStreamRequest,
): Hops {
  return {
    config,
    lookup,
    proxy,
    method: request.method ?? "GET",
    headers: requestHeaders(config, request.headers, request.body),
    body: request.body,
    timeoutMs: request.timeoutMs ?? config.defaultTimeoutMs,
    followRedirects: request.followRedirects ?? true,
    maxRedirects: Math.max(0, request.maxRedirects ?? DEFAULT_MAX_REDIRECTS),
  };
}

async function send(
  config: OutboundConfig,
  lookup: Resolver,
  proxy: () => Promise<ProxyChoice>,
  url: string,
  request: OutboundRequest,
): Promise<OutboundResponse> {
  const started = performance.now();
  const { signal } = request;
  preflight(config, signal);

  const settings: Settings = {
    ...hopsOf(config, lookup, proxy, request),
    maxBytes: request.maxBytes ?? config.defaultMaxBytes,
  };
  const idempotent = settings.method === "GET" || settings.method === "HEAD";
  const retries = Math.max(0, Math.floor(request.retries ?? (idempotent ? DEFAULT_RETRIES : 0)));

  for (let attempt = 0; ; attempt++) {
    let answer: Answer;
    try {
      answer = await attemptOnce(url, settings, signal);
    } catch (error) {
      const failure = asOutboundError(error);
      if (!isRetryableKind(failure.kind) || attempt >= retries) throw failure;
      await sleep(backoff(attempt), signal);
      continue;
    }
    if (!isRetryableStatus(answer.status) || attempt >= retries) {
      return toResponse(answer, started);
    }
    const delay = retryDelay(answer, attempt);
    if (delay === undefined) return toResponse(answer, started);
    await sleep(delay, signal);
  }
}

/** One attempt: the whole redirect chain from the original URL and the body, under one timeout. */
async function attemptOnce(
  original: string,
  settings: Settings,
  callerSignal: AbortSignal | undefined,
): Promise<Answer> {
  const attempt = attemptSignal(settings.timeoutMs, callerSignal);
  try {
    const { pending, url, redirects } = await follow(original, settings, attempt.signal);
    const body = await collect(pending.chunks(settings.maxBytes));
    return { status: pending.status, headers: pending.headers, url, redirects, body };
  } finally {
    attempt.release();
  }
}

/**
 * The streaming request: the redirect chain under `timeoutMs`, then the body handed over as it
 * arrives, bounded by `idleTimeoutMs` between bytes. Never retried: part of the body may have
 * been consumed by the time anything fails.
 */
async function openStream(
  config: OutboundConfig,
  lookup: Resolver,
  proxy: () => Promise<ProxyChoice>,
  url: string,
  request: OutboundStreamRequest,
): Promise<OutboundStream> {
  preflight(config, request.signal);
  const hops = hopsOf(config, lookup, proxy, request);
  const attempt = attemptSignal(hops.timeoutMs, request.signal);
  let arrival: Arrival;
  try {
    arrival = await follow(url, hops, attempt.signal);
  } catch (error) {
    attempt.release();
    throw asOutboundError(error);
  }
  // The headers are in: from here only the idle timeout and the caller's signal end the body.
  attempt.stopTimer();
  const { pending } = arrival;
  return {
    status: pending.status,
    headers: pending.headers,
    url: arrival.url,
    body: webBody(
      pending.chunks(request.maxBytes ?? config.defaultMaxBytes),
      request.idleTimeoutMs ?? hops.timeoutMs,
      attempt,
      arrival.context,
    ),
  };
}

interface Attempt {
  signal: AbortSignal;
  abort(reason: symbol): void;
  /** Ends the timeout alone: the caller's signal still aborts the attempt. */
  stopTimer(): void;
  /** Ends the timeout and stops listening to the caller's signal. */
  release(): void;
}

/** An attempt's own signal: fires on its timeout (TIMED_OUT) or the caller's (CALLER_ABORTED). */
function attemptSignal(timeoutMs: number, callerSignal: AbortSignal | undefined): Attempt {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(TIMED_OUT), timeoutMs);
  const onCallerAbort = () => controller.abort(CALLER_ABORTED);
  callerSignal?.addEventListener("abort", onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    stopTimer: () => clearTimeout(timer),
    release: () => {
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", onCallerAbort);
    },
  };
}

/**
 * Follows the redirect chain from `original` up to the headers of the answer that is not a
 * redirect to follow; every hop is SSRF-checked before connecting.
 */
async function follow(original: string, hops: Hops, signal: AbortSignal): Promise<Arrival> {
  let target = original;
  let outgoing: Outgoing = { method: hops.method, headers: { ...hops.headers }, body: hops.body };
  const redirects: string[] = [];
  for (;;) {
    const { url, addresses } = await untilAborted(
      checkUrl(target, hops.config, hops.lookup),
      signal,
      { timeoutMs: hops.timeoutMs },
    );
    const route = (await hops.proxy())(url);
    const context = {
      origin: url.origin,
      method: outgoing.method,
      timeoutMs: hops.timeoutMs,
      ...(route ? { proxy: route.address } : {}),
    };
    const pending = await exchange(url, addresses, route, outgoing, signal, context);
    const location = pending.headers.get("location");
    if (!hops.followRedirects || !REDIRECT_STATUSES.has(pending.status) || !location) {
      return { pending, url: url.href, redirects, context };
    }

    pending.discard();
    if (redirects.length >= hops.maxRedirects) {
      throw new OutboundError("too_many_redirects", `more than ${hops.maxRedirects} redirects`, {
        context: { ...context, redirects: redirects.length },
      });
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      // No cause: Node's URL error carries the Location value.
      throw new OutboundError("invalid_url", "a redirect pointed to an invalid URL", { context });
    }
    redirects.push(url.href);
    outgoing = redirected(outgoing, pending.status, url, next);
    target = next.href;
  }
}

/**
 * What follows a redirect: 303 (and 301/302 after a POST, as browsers do) turns into a bodiless
 * GET; another origin gets only the headers in CROSS_ORIGIN_HEADERS.
 */
function redirected(outgoing: Outgoing, status: number, from: URL, to: URL): Outgoing {
  let { method, body } = outgoing;
  const headers = { ...outgoing.headers };
  if (
    (status === 303 && method !== "HEAD") ||
    ((status === 301 || status === 302) && method === "POST")
  ) {
    method = "GET";
    body = undefined;
    for (const name of ["content-type", "content-length", "content-encoding"]) {
      delete headers[name];
    }
  }
  if (to.origin !== from.origin) {
    for (const name of Object.keys(headers)) {
      if (!CROSS_ORIGIN_HEADERS.has(name.toLowerCase())) delete headers[name];
    }
  }
  return { method, headers, body };
}

/**
 * The body as a web stream, pulled from the decoded chunks as the reader asks (a full queue
 * stops pulling, which leaves the socket paused). The stream errors as soon as the attempt's
 * signal fires, even between pulls; cancelling it aborts the attempt, which destroys the
 * connection.
 */
function webBody(
  chunks: AsyncGenerator<Uint8Array>,
  idleTimeoutMs: number,
  attempt: Attempt,
  context: Record<string, unknown>,
): ReadableStream<Uint8Array> {
  let onAbort: (() => void) | undefined;
  const finish = () => {
    attempt.release();
    if (onAbort) attempt.signal.removeEventListener("abort", onAbort);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      onAbort = () => {
        finish();
        controller.error(abortError(attempt.signal, { ...context, idleTimeoutMs }));
        // Runs the body's cleanup when it sits between chunks; a pending read fails by itself.
        void chunks.return(undefined).catch(() => {});
      };
      attempt.signal.addEventListener("abort", onAbort, { once: true });
    },
    async pull(controller) {
      const idle = setTimeout(() => attempt.abort(IDLE), idleTimeoutMs);
      try {
        const next = await chunks.next();
        if (next.done) {
          finish();
          controller.close();
        } else {
          controller.enqueue(next.value);
        }
      } catch (error) {
        finish();
        throw error;
      } finally {
        clearTimeout(idle);
      }
    },
    cancel() {
      finish();
      attempt.abort(CANCELLED);
      void chunks.return(undefined).catch(() => {});
    },
  });
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of chunks) {
    parts.push(chunk);
    total += chunk.byteLength;
  }
  return new Uint8Array(Buffer.concat(parts, total));
}

interface Pending {
  status: number;
  headers: Headers;
  /**
   * The decoded body, chunk by chunk, failing with `too_large` past `maxBytes`. Stopping before
   * its end (an error, or `return()` between chunks) destroys the connection.
   */
  chunks(maxBytes: number): AsyncGenerator<Uint8Array>;
  discard(): void;
}

/**
 * Sends one request to one of the pre-checked addresses, through `route` when a proxy applies,
 * and resolves once headers arrive.
 */
async function exchange(
  url: URL,
  addresses: string[],
  route: ProxyRoute | undefined,
  outgoing: Outgoing,
  signal: AbortSignal,
  context: Record<string, unknown>,
): Promise<Pending> {
  if (signal.aborted) throw abortError(signal, context);
  const secure = url.protocol === "https:";
  const hostname = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  // SNI and certificate checks use the host name; an IP literal has no server name.
  const servername = secure && isIP(hostname) === 0 ? { servername: hostname } : {};
  const target: https.RequestOptions = {
    method: outgoing.method,
    hostname,
    port: portOf(url),
    path: `${url.pathname}${url.search}`,
    headers: outgoing.headers,
  };
  let options: https.RequestOptions;
  if (!route) {
    options = {
      ...target,
      // A fresh connection per request: a pooled socket would sidestep the per-hop check.
      agent: false,
      // DNS rebinding: the socket connects to what checkUrl resolved, never to a new answer.
      lookup: pinnedLookup(addresses),
      ...servername,
    };
  } else if (secure) {
    const socket = await tunnel(route, hostname, portOf(url), signal, context);
    options = {
      ...target,
      defaultPort: 443,
      // TLS end to end through the tunnel, the certificate checked against the host name.
      createConnection: () => {
        const secured = tls.connect({ socket, host: hostname, ...servername });
        secured.once("close", () => socket.destroy());
        return secured;
      },
    };
  } else {
    // Plain http: the proxy gets the absolute URI and connects itself, by the name that was
    // resolved and checked above (a pinned address would reach the upstream as its Host).
    options = {
      method: outgoing.method,
      hostname: route.hostname,
      port: route.port,
      path: `${url.protocol}//${url.host}${url.pathname}${url.search}`,
      headers: {
        host: url.host,
        ...outgoing.headers,
        ...(route.authorization ? { "proxy-authorization": route.authorization } : {}),
      },
      agent: false,
    };
  }
  return new Promise((resolve, reject) => {
    let request: http.ClientRequest;
    try {
      request = (secure ? https : http).request(options);
    } catch (cause) {
      reject(new OutboundError("network", "the request could not be sent", { cause, context }));
      return;
    }
    const onAbort = () => request.destroy();
    signal.addEventListener("abort", onAbort, { once: true });
    const detach = () => signal.removeEventListener("abort", onAbort);
    let connected = false;
    request.once("socket", (socket) => socket.once("connect", () => (connected = true)));

    request.on("error", (cause) => {
      detach();
      reject(
        signal.aborted
          ? abortError(signal, context)
          : new OutboundError(
              "network",
              route && !secure && !connected
                ? `the proxy ${route.address} could not be reached (${errorCode(cause)})`
                : describeNetworkError(cause),
              { cause, context },
            ),
      );
    });
    request.on("response", (response: IncomingMessage) => {
      if (route && !secure && response.statusCode === 407) {
        detach();
        request.destroy();
        reject(
          new OutboundError("network", `the proxy ${route.address} wants credentials (407)`, {
            context: { ...context, status: 407 },
          }),
        );
        return;
      }
      resolve({
        status: response.statusCode ?? 0,
        headers: toHeaders(response.rawHeaders),
        chunks: (maxBytes) =>
          bodyChunks(
            decodedBody(response, outgoing.method, maxBytes, signal, context),
            request,
            signal,
            context,
            detach,
          ),
        discard: () => {
          detach();
          // Destroyed, not drained: a redirect body can be endless.
          request.destroy();
        },
      });
    });
    request.end(outgoing.body);
  });
}

/**
 * A CONNECT tunnel to the host by name, as for plain http: corporate proxies allow or refuse by
 * domain and would refuse a bare address. The guard has checked what the name resolves to here;
 * the proxy resolves it again, so what it may reach from there is the proxy's own policy.
 */
async function tunnel(
  route: ProxyRoute,
  hostname: string,
  port: number,
  signal: AbortSignal,
  context: Record<string, unknown>,
): Promise<Socket> {
  const { authority, openTunnel } = await import("./proxy");
  try {
    const socket = await openTunnel(
      route,
      authority(hostname.replace(/^\[|\]$/g, ""), port),
      signal,
    );
    if (signal.aborted) {
      socket.destroy();
      throw abortError(signal, context);
    }
    return socket;
  } catch (error) {
    if (signal.aborted) throw abortError(signal, context);
    if (!(error instanceof OutboundError)) throw error;
    throw new OutboundError(error.kind, error.message, {
      cause: error.cause,
      context: { ...context, ...error.context },
    });
  }
}

/**
 * The body's chunks with its connection's cleanup: the connection is destroyed unless the body
 * was read to its end, and every failure becomes an OutboundError.
 */
async function* bodyChunks(
  chunks: AsyncGenerator<Uint8Array>,
  request: http.ClientRequest,
  signal: AbortSignal,
  context: Record<string, unknown>,
  detach: () => void,
): AsyncGenerator<Uint8Array> {
  let ended = false;
  try {
    yield* chunks;
    ended = true;
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    if (signal.aborted) throw abortError(signal, context);
    throw new OutboundError("network", "the response body could not be read", {
      cause: error,
      context,
    });
  } finally {
    if (!ended) request.destroy();
    detach();
  }
}

/**
 * The body through its decoders, chunk by chunk as it arrives, failing as soon as it exceeds
 * `maxBytes`. Pulled, not pushed: the socket pauses while no one reads.
 */
async function* decodedBody(
  response: IncomingMessage,
  method: string,
  maxBytes: number,
  signal: AbortSignal,
  context: Record<string, unknown>,
): AsyncGenerator<Uint8Array> {
  const status = response.statusCode ?? 0;
  if (method === "HEAD" || status === 204 || status === 304) {
    response.resume();
    return;
  }
  const tooLarge = (announced?: number) =>
    new OutboundError("too_large", `the response body exceeds ${maxBytes} bytes`, {
      context: { ...context, maxBytes, ...(announced !== undefined ? { announced } : {}) },
    });
  const declared = Number(response.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(declared);

  const decoded = new PassThrough();
  // A failing stage or the signal destroys `decoded` with the error, which the loop below
  // throws; stopping the loop early destroys every stage back to the response.
  pipeline([response, ...decoders(response.headers["content-encoding"]), decoded], {
    signal,
  }).catch(() => {});
  let total = 0;
  for await (const chunk of decoded as AsyncIterable<Buffer>) {
    total += chunk.length;
    // Counted after decompression, so a small gzip bomb stops here too.
    if (total > maxBytes) throw tooLarge();
    yield chunk;
  }
}

/**
 * zlib streams for Content-Encoding, outermost last. An encoding we do not know leaves the
 * body as it came (as fetch does). Lenient flushing accepts truncated streams like browsers do.
 */
function decoders(header: string | undefined): NodeJS.ReadWriteStream[] {
  if (!header) return [];
  const codings = header
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  const streams: NodeJS.ReadWriteStream[] = [];
  for (const coding of codings.reverse()) {
    if (coding === "gzip" || coding === "x-gzip") {
      streams.push(zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    } else if (coding === "deflate") {
      streams.push(zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    } else if (coding === "br") {
      streams.push(
        zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }),
      );
    } else {
      return [];
    }
  }
  return streams;
}

function pinnedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const wanted =
      options.family === 4 || options.family === "IPv4"
        ? 4
        : options.family === 6 || options.family === "IPv6"
          ? 6
          : 0;
    const usable = wanted === 0 ? entries : entries.filter((entry) => entry.family === wanted);
    const first = usable[0];
    if (!first) {
      const error: NodeJS.ErrnoException = new Error("no checked address of the wanted family");
      error.code = "ENOTFOUND";
      callback(error, "", 0);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}

function requestHeaders(
  config: OutboundConfig,
  given: Record<string, string> | undefined,
  body: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given ?? {})) {
    try {
      http.validateHeaderName(name);
      http.validateHeaderValue(name, value);
    } catch (cause) {
      // Node's message names the header, never its value.
      throw new OutboundError("invalid_url", `request header ${JSON.stringify(name)} is invalid`, {
        cause,
      });
    }
    headers[name.toLowerCase()] = value;
  }
  headers["user-agent"] ??= config.userAgent;
  // Ours, always: the client can only decode what it asked for.
  headers["accept-encoding"] = ACCEPT_ENCODING;
  if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
  else delete headers["content-length"];
  return headers;
}

function toHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i] as string, raw[i + 1] as string);
    } catch {
      // A header the Fetch Headers class refuses is one no tool could use either.
    }
  }
  return headers;
}

function toResponse(answer: Answer, started: number): OutboundResponse {
  const { body, headers } = answer;
  return {
    ...answer,
    text: () => decodeText(body, headers.get("content-type")),
    json: () => JSON.parse(decodeText(body, headers.get("content-type"))),
    elapsedMs: Math.round(performance.now() - started),
  };
}

const LATIN1_LABELS = new Set(["latin1", "iso-8859-1", "iso8859-1", "windows-1252", "cp1252"]);

function decodeText(body: Uint8Array, contentType: string | null): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
  if (charset && LATIN1_LABELS.has(charset)) {
    // WHATWG decodes every latin1 label as windows-1252, which is what servers mean by it.
    return new TextDecoder("windows-1252").decode(body);
  }
  return new TextDecoder("utf-8").decode(body);
}

function isRetryableKind(kind: OutboundError["kind"]): boolean {
  return kind === "network" || kind === "timeout";
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/** Full jitter: anywhere between 0 and the exponential ceiling. */
function backoff(attempt: number): number {
  return Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
}

/**
 * How long to wait before retrying a 429/5xx, or undefined to hand the response back. An
 * AbortSignal does not expose its deadline, so the cap is MAX_RETRY_AFTER_MS; a caller whose
 * signal fires during the wait gets `aborted` at once.
 */
function retryDelay(answer: Answer, attempt: number): number | undefined {
  if (answer.status === 429 || answer.status === 503) {
    const wait = retryAfter(answer.headers.get("retry-after"));
    if (wait !== undefined) return wait > MAX_RETRY_AFTER_MS ? undefined : wait;
  }
  return backoff(attempt);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(callerAborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(callerAborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Stops waiting for work that cannot be cancelled itself (a DNS lookup) when the attempt ends. */
function untilAborted<T>(
  work: Promise<T>,
  signal: AbortSignal,
  context: Record<string, unknown>,
): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal, context));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal, context));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function callerAborted(context: Record<string, unknown> = {}): OutboundError {
  return new OutboundError("aborted", "the request was aborted by the caller", { context });
}

function abortError(signal: AbortSignal, context: Record<string, unknown>): OutboundError {
  if (signal.reason === TIMED_OUT) {
    return new OutboundError("timeout", "no complete answer within the timeout", { context });
  }
  if (signal.reason === IDLE) {
    return new OutboundError("timeout", "no bytes arrived within the idle timeout", { context });
  }
  return callerAborted(context);
}

function portOf(url: URL): number {
  return url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
}

function describeNetworkError(cause: unknown): string {
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return code ? `the connection failed (${code})` : "the connection failed";
}

function errorCode(cause: unknown): string {
  return (cause as NodeJS.ErrnoException | undefined)?.code ?? "error";
}

function asOutboundError(error: unknown): OutboundError {
  if (error instanceof OutboundError) return error;
  return new OutboundError("network", "the request failed", { cause: error });
}
