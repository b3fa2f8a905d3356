import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { createServer as createTlsServer, type Server as TlsServer } from "node:tls";
import { checkCapabilities, networkCapability } from "@toolbus/core/capabilities";
import { parseStageConfig } from "@toolbus/core/config";
import { createHttpClient, type Resolver } from "@toolbus/core/outbound";
import { startUpstream, type Upstream } from "@toolbus/core/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { withProbe } from "../packages/core/src/outbound/probe";
import {
  type ForwardProxy,
  type ForwardProxyOptions,
  startForwardProxy,
} from "./support/forward-proxy";
import { failure, outboundConfig } from "./support/outbound";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// Outbound HTTP through a real forward proxy on loopback, which records what it is asked for.

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function proxy(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
  const started = await startForwardProxy(options);
  closers.push(started.close);
  return started;
}

async function upstream(): Promise<Upstream> {
  const started = await startUpstream((request, response) => {
    if (request.url.pathname === "/to-metadata") {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/plain" });
    response.end(`hello ${request.headers.host}`);
  });
  closers.push(started.close);
  return started;
}

/** A port nothing listens on: it was free a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const config = outboundConfig;

/** Names the tests resolve themselves, as DNS would. */
const names: Record<string, string> = {
  "upstream.test": "127.0.0.1",
  "intranet.test": "10.0.0.5",
  "metadata.test": "169.254.169.254",
};
const lookup: Resolver = async (hostname) => {
  const address = names[hostname];
  if (!address) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
  return [{ address, family: 4 }];
};

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

describe("outbound client through a forward proxy", () => {
  it("sends an http request to the proxy as an absolute URI, with the upstream's Host", async () => {
    const forward = await proxy();
    const server = await upstream();
    const client = createHttpClient(config({ proxy: { url: forward.url } }), { env: {} });

    const response = await client.request(`${server.origin}/things?q=1`);

    expect(response.status).toBe(200);
    expect(response.text()).toBe(`hello ${new URL(server.origin).host}`);
    expect(forward.asks).toMatchObject([{ method: "GET", target: `${server.origin}/things?q=1` }]);
    expect(forward.asks[0]?.headers.host).toBe(new URL(server.origin).host);
    expect(forward.asks[0]?.headers["proxy-authorization"]).toBeUndefined();
    expect(server.requests).toHaveLength(1);
  });

  it("tunnels https with CONNECT to the host by name, after checking what it resolves to, TLS naming the host", async () => {
    const forward = await proxy({ hosts: { "upstream.test": "127.0.0.1" } });
    // No certificate: the handshake ends at SNI, which is all this test needs to see.
    const servernames: string[] = [];
    const tlsServer: TlsServer = createTlsServer({
      SNICallback: (servername, callback) => {
        servernames.push(servername);
        callback(new Error("no certificate here"), undefined);
      },
    });
    tlsServer.on("tlsClientError", () => {});
    await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => tlsServer.close(() => resolve())));
    const { port } = tlsServer.address() as AddressInfo;
    const client = createHttpClient(config({ proxy: { url: forward.url } }), {
      lookup,
      env: {},
    });

    const error = await failure(client.request(`https://upstream.test:${port}/`, { retries: 0 }));

    expect(error.kind).toBe("network");
    // The proxy is handed the name (domain-filtering proxies refuse bare addresses), and TLS
    // through its tunnel names the host too.
    expect(forward.asks).toMatchObject([{ method: "CONNECT", target: `upstream.test:${port}` }]);
    expect(servernames).toEqual(["upstream.test"]);
  });

  it("goes direct to hosts in noProxy", async () => {
    const forward = await proxy();
    const server = await upstream();
    const client = createHttpClient(
      config({ proxy: { url: forward.url, noProxy: ["other.test", "127.0.0.1"] } }),
      { env: {} },
    );

    expect((await client.request(`${server.origin}/direct`)).status).toBe(200);
    expect(forward.asks).toEqual([]);
    expect(server.requests.map((request) => request.url.pathname)).toEqual(["/direct"]);
  });

  it("refuses a private, loopback or metadata target exactly as without a proxy: the proxy is never asked", async () => {
    const forward = await proxy();
    const server = await upstream();
    // The default guard: nothing exempt, so loopback is refused too.
    const client = createHttpClient(config({ allowHosts: [], proxy: { url: forward.url } }), {
      lookup,
      env: {},
    });

    for (const url of [
      `${server.origin}/loopback`,
      "http://169.254.169.254/latest/meta-data",
      "http://intranet.test/",
      "https://intranet.test/",
      "https://metadata.test/",
      `http://[::ffff:127.0.0.1]:${new URL(server.origin).port}/`,
    ]) {
      expect((await failure(client.request(url, { retries: 0 }))).kind, url).toBe("blocked");
    }
    expect(forward.asks).toEqual([]);
    expect(server.requests).toEqual([]);
  });

  it("checks every redirect hop before the proxy sees it", async () => {
    const forward = await proxy();
    const server = await upstream();
    const client = createHttpClient(config({ proxy: { url: forward.url } }), { env: {} });

    const error = await failure(client.request(`${server.origin}/to-metadata`, { retries: 0 }));

    expect(error.kind).toBe("blocked");
    expect(forward.asks.map((ask) => ask.target)).toEqual([`${server.origin}/to-metadata`]);
  });

  it("sends the URL's credentials as Proxy-Authorization, and never shows them", async () => {
    const forward = await proxy({ credentials: { user: "agent", password: "p@ss:word" } });
    const server = await upstream();
    const [host] = forward.url.replace("http://", "").split("/");
    const withCredentials = `http://agent:${encodeURIComponent("p@ss:word")}@${host}`;
    const client = createHttpClient(config({ proxy: { url: withCredentials } }), { env: {} });

    expect((await client.request(`${server.origin}/authed`)).status).toBe(200);
    expect(forward.asks[0]?.headers["proxy-authorization"]).toBe(basic("agent", "p@ss:word"));
    // Only the proxy gets them.
    expect(server.requests[0]?.headers["proxy-authorization"]).toBeUndefined();

    const anonymous = createHttpClient(config({ proxy: { url: forward.url } }), { env: {} });
    const error = await failure(anonymous.request(`${server.origin}/anonymous`, { retries: 0 }));
    expect(error).toMatchObject({ kind: "network", context: { proxy: forward.address } });
    expect(error.message).toBe(`the proxy ${forward.address} wants credentials (407)`);

    const wrong = createHttpClient(config({ proxy: { url: `http://agent:guess@${host}` } }), {
      lookup,
      env: {},
    });
    const refused = await failure(wrong.request("https://upstream.test/", { retries: 0 }));
    expect(refused.message).toBe(
      `the proxy ${forward.address} refused the tunnel (407 Proxy Authentication Required)`,
    );
    expect(JSON.stringify({ message: refused.message, context: refused.context })).not.toMatch(
      /guess|agent/,
    );
    expect(server.requests.map((request) => request.url.pathname)).toEqual(["/authed"]);
  });

  it("fails as network, naming the proxy, when the proxy refuses CONNECT or cannot be reached", async () => {
    const forward = await proxy({ refuseConnect: 403 });
    const refusing = createHttpClient(config({ proxy: { url: forward.url } }), {
      lookup,
      env: {},
    });
    const refused = await failure(refusing.request("https://upstream.test/", { retries: 0 }));
    expect(refused).toMatchObject({
      kind: "network",
      message: `the proxy ${forward.address} refused the tunnel (403 Refused)`,
      context: { proxy: forward.address, status: 403 },
    });

    const port = await closedPort();
    const gone = createHttpClient(config({ proxy: { url: `http://127.0.0.1:${port}` } }), {
      env: {},
    });
    const unreachable = await failure(gone.request("http://127.0.0.1:9/", { retries: 0 }));
    expect(unreachable).toMatchObject({
      kind: "network",
      message: `the proxy 127.0.0.1:${port} could not be reached (ECONNREFUSED)`,
      context: { proxy: `127.0.0.1:${port}` },
    });
  });
});

describe("a proxy that never answers", () => {
  it("times the request out as kind timeout, CONNECT included", async () => {
    const sockets = new Set<Socket>();
    const silent = createNetServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    closers.push(
      () =>
        new Promise((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    );
    const { port } = silent.address() as AddressInfo;
    const client = createHttpClient(
      config({ defaultTimeoutMs: 300, proxy: { url: `http://127.0.0.1:${port}` } }),
      { lookup, env: {} },
    );

    for (const url of ["https://upstream.test/", "http://upstream.test/"]) {
      const error = await failure(client.request(url, { retries: 0 }));
      expect(error.kind, url).toBe("timeout");
    }
  });
});

describe("proxy settings from the environment", () => {
  it("uses HTTP_PROXY for http URLs, lower-case http_proxy first, and NO_PROXY to go direct", async () => {
    const lower = await proxy();
    const upper = await proxy();
    const server = await upstream();

    await createHttpClient(config(), { env: { HTTP_PROXY: upper.url } }).request(server.origin);
    expect(upper.asks).toHaveLength(1);

    await createHttpClient(config(), {
      env: { HTTP_PROXY: upper.url, http_proxy: lower.url },
    }).request(server.origin);
    expect(lower.asks).toHaveLength(1);
    expect(upper.asks).toHaveLength(1);

    // HTTPS_PROXY is for https: URLs only.
    await createHttpClient(config(), { env: { HTTPS_PROXY: upper.url } }).request(server.origin);
    await createHttpClient(config(), {
      env: { HTTP_PROXY: upper.url, NO_PROXY: "example.com, 127.0.0.1" },
    }).request(server.origin);
    expect(upper.asks).toHaveLength(1);
    expect(server.requests).toHaveLength(4);
  });

  it("lets the stage's outbound.proxy win over the environment, and `false` go direct", async () => {
    const staged = await proxy();
    const fromEnv = await proxy();
    const server = await upstream();
    const env = { HTTP_PROXY: fromEnv.url, NO_PROXY: "127.0.0.1" };

    await createHttpClient(config({ proxy: { url: staged.url } }), { env }).request(server.origin);
    await createHttpClient(config({ proxy: false }), { env }).request(server.origin);

    // The stage's setting replaces the environment's NO_PROXY too.
    expect(staged.asks).toHaveLength(1);
    expect(fromEnv.asks).toEqual([]);
    expect(server.requests).toHaveLength(2);
  });

  it("fails requests loudly, without the value, when a variable is not a usable proxy URL", async () => {
    const client = createHttpClient(config(), {
      lookup,
      env: { HTTPS_PROXY: "socks5://user:secret@proxy.test:1080" },
    });
    const error = await failure(client.request("https://upstream.test/", { retries: 0 }));
    expect(error.message).toBe("the proxy setting (env:HTTPS_PROXY) must be an http:// URL");
  });
});

describe("the network capability through a proxy", () => {
  let target: Server;
  let open = 0;

  beforeAll(async () => {
    target = createServer();
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    open = (target.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => target.close(resolve)));

  const check = async (outbound: object) => {
    const stage = parseStageConfig({ outbound });
    const [status] = await checkCapabilities(
      [networkCapability],
      {
        config: stage,
        secret: () => undefined,
        // A capability refresh's client: it probes as it routes requests.
        http: withProbe(createHttpClient(stage.outbound, { env: {} }), stage.outbound, { env: {} }),
      },
      new Date(),
    );
    return status;
  };

  it("is there when the proxy opens a tunnel to the probe host, and says so", async () => {
    const forward = await proxy({ credentials: { user: "probe", password: "pw" } });
    const url = forward.url.replace("http://", "http://probe:pw@");
    const status = await check({
      proxy: { url },
      networkProbe: { host: "127.0.0.1", port: open },
    });
    expect(status).toMatchObject({
      available: true,
      reason: `127.0.0.1:${open} is reachable through proxy ${forward.address}.`,
      source: `probe:127.0.0.1:${open}`,
    });
    expect(forward.asks).toMatchObject([
      {
        method: "CONNECT",
        target: `127.0.0.1:${open}`,
        headers: { "proxy-authorization": basic("probe", "pw") },
      },
    ]);
  });

  it("is missing, with the proxy's answer, when the proxy refuses CONNECT", async () => {
    const forward = await proxy({ refuseConnect: 403 });
    expect(
      await check({ proxy: { url: forward.url }, networkProbe: { host: "127.0.0.1", port: open } }),
    ).toMatchObject({
      available: false,
      reason: `No outbound network: 127.0.0.1:${open} could not be reached through proxy ${forward.address} (the proxy answered 403 Refused).`,
    });
  });

  it("is missing, naming the proxy, when the proxy cannot be reached", async () => {
    const port = await closedPort();
    expect(
      await check({
        proxy: { url: `http://127.0.0.1:${port}` },
        networkProbe: { host: "127.0.0.1", port: open },
      }),
    ).toMatchObject({
      available: false,
      reason: `No outbound network: 127.0.0.1:${open} could not be reached through proxy 127.0.0.1:${port} (the proxy could not be reached: ECONNREFUSED).`,
    });
  });

  it("probes directly when the probe host is in noProxy", async () => {
    const forward = await proxy({ refuseConnect: 403 });
    const status = await check({
      proxy: { url: forward.url, noProxy: ["127.0.0.1"] },
      networkProbe: { host: "127.0.0.1", port: open },
    });
    expect(status).toMatchObject({ available: true, source: `probe:127.0.0.1:${open}` });
    expect(status?.reason).toBeUndefined();
    expect(forward.asks).toEqual([]);
  });
});

describe("a stage behind a proxy", () => {
  let system: TestToolbus;
  let forward: ForwardProxy;
  let server: Upstream;

  beforeAll(async () => {
    forward = await startForwardProxy();
    server = await startUpstream((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
    const { hostname, port } = new URL(server.origin);
    system = await startTestToolbus({
      config: {
        outbound: {
          allowHosts: ["127.0.0.1"],
          proxy: { url: forward.url },
          networkProbe: { host: hostname, port: Number(port) },
        },
      },
    });
  }, 60_000);

  afterAll(async () => {
    await system?.stop();
    await server?.close();
    await forward?.close();
  }, 60_000);

  it("sends a tool's request through the proxy, and probes the network through it", async () => {
    const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
      method: "POST",
      json: { tool: "link_validator", input: { urls: [`${server.origin}/page`] }, wait: 20 },
    });
    expect(response.status).toBe(200);
    const view = (await response.json()) as {
      status: string;
      result: { data: { results: Array<{ reachable: boolean; status?: number }> } };
    };
    expect(view.status).toBe("succeeded");
    expect(view.result.data.results).toMatchObject([{ reachable: true, status: 200 }]);
    expect(forward.asks.some((ask) => ask.target === `${server.origin}/page`)).toBe(true);
    expect(server.requests.length).toBeGreaterThan(0);

    const asked = forward.asks.length;
    expect((await system.request("/v1/capabilities/refresh", { method: "POST" })).status).toBe(200);
    const listed = (await (await system.request("/v1/capabilities")).json()) as {
      capabilities: Array<{ name: string; available: boolean; reason?: string }>;
    };
    expect(listed.capabilities.find((entry) => entry.name === "network")).toMatchObject({
      available: true,
      reason: expect.stringContaining(`through proxy ${forward.address}`),
    });
    expect(forward.asks.slice(asked)).toMatchObject([
      { method: "CONNECT", target: new URL(server.origin).host },
    ]);
  }, 30_000);
});
