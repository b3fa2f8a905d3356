import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// SSRF through link_validator, the tool that fetches URLs its caller chose, via the API. A
// loopback server counts every request that reaches it: a refused URL must never arrive.

const hits: string[] = [];
let server: Server;
let port = 0;
/** Default stage config: allowHosts empty, so every non-public address is refused. */
let closed: TestToolbus;
/** allowHosts ["127.0.0.1"]: the first hop is reachable, only the redirect's target is not. */
let open: TestToolbus;

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(`${req.headers.host} ${req.url}`);
    if (req.url === "/to-metadata") {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" });
    } else {
      res.writeHead(200, { "content-type": "text/plain" });
    }
    res.end("internal");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  [closed, open] = await Promise.all([
    startTestToolbus(),
    startTestToolbus({ config: { outbound: { allowHosts: ["127.0.0.1"] } } }),
  ]);
});

afterAll(async () => {
  await Promise.all([closed?.stop(), open?.stop()]);
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
}, 60_000);

interface LinkResult {
  url: string;
  reachable: boolean;
  status?: number;
  error?: { kind: string; message?: string };
}

async function validate(system: TestToolbus, urls: string[]): Promise<LinkResult[]> {
  const response = await system.request(`/v1/runs/${system.runId()}/calls`, {
    method: "POST",
    json: { tool: "link_validator", input: { urls }, wait: 20 },
  });
  expect(response.status).toBe(200);
  const view = (await response.json()) as {
    status: string;
    result: { data: { results: LinkResult[] } };
  };
  expect(view.status).toBe("succeeded");
  return view.result.data.results;
}

describe("SSRF through link_validator", () => {
  it("refuses loopback in every spelling when allowHosts is empty, and nothing arrives", async () => {
    const urls = [
      `http://127.0.0.1:${port}/plain`,
      `http://localhost:${port}/dns-name`,
      `http://[::ffff:127.0.0.1]:${port}/ipv6-mapped`,
      `http://[::ffff:7f00:1]:${port}/ipv6-mapped-hex`,
      `http://2130706433:${port}/decimal`,
      `http://0177.0.0.1:${port}/octal`,
      `http://0x7f.1:${port}/hex-short`,
      `http://127.1:${port}/short`,
      `http://[::1]:${port}/ipv6-loopback`,
      `http://0.0.0.0:${port}/unspecified`,
    ];
    const before = hits.length;
    const results = await validate(closed, urls);
    expect(results.map((r) => [r.url, r.reachable, r.error?.kind])).toEqual(
      urls.map((url) => [expect.stringContaining(new URL(url).pathname), false, "blocked"]),
    );
    expect(hits.slice(before)).toEqual([]);
  }, 30_000);

  it("refuses the cloud metadata address and private ranges directly", async () => {
    const urls = [
      "http://169.254.169.254/latest/meta-data",
      "http://[fd00:ec2::254]/latest/meta-data",
      "http://10.0.0.1/",
      "http://192.168.1.1/",
      "http://[::ffff:169.254.169.254]/latest/meta-data",
    ];
    const results = await validate(closed, urls);
    for (const result of results) {
      expect(result.reachable).toBe(false);
      expect(result.error?.kind, result.url).toBe("blocked");
    }
    expect(results).toHaveLength(urls.length);
  }, 30_000);

  it("follows an allowed loopback hop but refuses its redirect to 169.254.169.254", async () => {
    const before = hits.length;
    const results = await validate(open, [`http://127.0.0.1:${port}/to-metadata`]);
    expect(results).toMatchObject([{ reachable: false, error: { kind: "blocked" } }]);
    // The first hop was made (it is allowed); nothing went further.
    expect(hits.slice(before)).toEqual([`127.0.0.1:${port} /to-metadata`]);
  }, 30_000);
});
