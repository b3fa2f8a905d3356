/**
 * The one way tools reach the internet. Every upstream base URL is configuration, so tests
 * point tools at HTTP servers on loopback (allowed by `allowHosts`).
 */
export interface OutboundRequest {
  method?: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  body?: string;
  /** Per-attempt timeout. Default: the client's (10 s). */
  timeoutMs?: number;
  /** Response body cap in bytes; larger bodies fail with kind `too_large`. Default 2 MB. */
  maxBytes?: number;
  /** Retries on network errors, 429 and 5xx (GET/HEAD only unless set). Default 2. */
  retries?: number;
  /** Follow redirects (each hop SSRF-checked). Default true, at most `maxRedirects` (5). */
  followRedirects?: boolean;
  maxRedirects?: number;
  /** The tool call's signal: aborts everything when the tool times out. */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Headers;
  /** The URL that answered, after redirects. */
  url: string;
  /** Every URL visited before `url`, in order. */
  redirects: string[];
  body: Uint8Array;
  text(): string;
  json(): unknown;
  elapsedMs: number;
}

/** An answer whose body is read as it arrives (an MCP server's event stream). */
export interface OutboundStream {
  status: number;
  headers: Headers;
  /** The URL that answered, after redirects. */
  url: string;
  /**
   * The decoded body as it arrives. Errors with an OutboundError: `too_large` once the bytes
   * read pass `maxBytes`, `timeout` when `idleTimeoutMs` passes without a byte, `aborted` when
   * the caller's signal fires. Cancelling it closes the connection.
   */
  body: ReadableStream<Uint8Array>;
}

export interface OutboundStreamRequest extends Omit<OutboundRequest, "retries" | "maxBytes"> {
  /** Cap on the whole body, in bytes, after decompression. Default: the client's. */
  maxBytes?: number;
  /** Longest wait for the next bytes once the headers arrived. Default: `timeoutMs`. */
  idleTimeoutMs?: number;
}

export interface HttpClient {
  /** Resolves for any HTTP status (the caller decides); rejects with OutboundError otherwise. */
  request(url: string, request?: OutboundRequest): Promise<OutboundResponse>;
  /**
   * The same request (SSRF guard per hop, proxy, redirects), resolved once the headers arrive,
   * the body streamed rather than buffered; never retried. `timeoutMs` bounds the wait for the
   * headers. Absent on a client that cannot stream.
   */
  open?(url: string, request?: OutboundStreamRequest): Promise<OutboundStream>;
  /**
   * Opens a TCP connection to host:port, routed as a request to https://host:port would be,
   * and closes it: how the network capability finds out there is a network. Absent on a
   * client that never reaches the network.
   */
  probe?(host: string, port: number, timeoutMs: number): Promise<Reachability>;
}

/** What a probe found. */
export interface Reachability {
  /** host:port as probed (IPv6 in brackets). */
  target: string;
  /** The forward proxy the connection was asked of, when the route goes through one. */
  proxy?: string;
  /** Why no connection opened, in a few words; absent once one did. */
  failure?: string;
  /** Why no connection was tried: the proxy setting cannot be used (OutboundError's message). */
  unroutable?: string;
}

export type OutboundErrorKind =
  | "blocked" // SSRF guard: the URL or a redirect resolves to a forbidden address
  | "invalid_url"
  | "timeout"
  | "too_large"
  | "too_many_redirects"
  | "network" // DNS failure, connection refused or reset
  | "aborted"; // the caller's signal fired

/** Stage configuration of outbound HTTP. */
export interface OutboundConfig {
  userAgent: string;
  /**
   * Hosts or CIDR ranges exempt from the SSRF guard (e.g. "127.0.0.1", "localhost", "::1",
   * "10.0.0.0/8"). Empty in production; tests allow loopback for their stand-in upstreams.
   */
  allowHosts: string[];
  defaultTimeoutMs: number;
  defaultMaxBytes: number;
  /** When false, nothing leaves the machine: every request fails fast with `network`. */
  networkEnabled: boolean;
  /**
   * The forward proxy requests go through. Absent: HTTPS_PROXY / HTTP_PROXY / NO_PROXY from
   * the environment; set, it replaces them all; `false` goes direct whatever they say.
   */
  proxy?: ProxySetting | false | undefined;
}

/** A forward proxy (`outbound.proxy` in the stage config). */
export interface ProxySetting {
  /** `http://[user:password@]host[:port]`; credentials become Proxy-Authorization. */
  url: string;
  /** Hosts that go direct, as NO_PROXY lists them (`internal.corp`, `.corp`, `10.0.0.0/8`, `*`). */
  noProxy?: string[] | undefined;
}

/** Where secrets come from: environment variables by name (Lambda gets them bound by name). */
export type SecretSource = (name: string) => string | undefined;
