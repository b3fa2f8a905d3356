import { describe, expect, it, vi } from "vitest";
import { OutboundError } from "./errors";
import { checkUrl, forbiddenReason, isForbiddenAddress, type Resolver } from "./ssrf";

const forbidden: Array<[address: string, reason: RegExp]> = [
  ["127.0.0.1", /loopback/],
  ["127.255.255.254", /loopback/],
  ["0.0.0.0", /unspecified/],
  ["0.1.2.3", /unspecified/],
  ["10.0.0.1", /private/],
  ["10.255.255.255", /private/],
  ["172.16.0.1", /private/],
  ["172.31.255.255", /private/],
  ["192.168.1.1", /private/],
  ["169.254.0.1", /link-local/],
  ["169.254.169.254", /metadata/],
  ["100.64.0.1", /carrier-grade NAT/],
  ["100.127.255.255", /carrier-grade NAT/],
  ["100.100.100.200", /metadata/],
  ["192.0.0.1", /reserved/],
  ["192.0.2.1", /documentation/],
  ["198.18.0.1", /benchmarking/],
  ["198.51.100.7", /documentation/],
  ["203.0.113.9", /documentation/],
  ["224.0.0.1", /multicast/],
  ["239.255.255.250", /multicast/],
  ["240.0.0.1", /reserved/],
  ["255.255.255.255", /broadcast/],
  ["::", /unspecified/],
  ["::1", /loopback/],
  ["[::1]", /loopback/],
  ["fc00::1", /unique local/],
  ["fd12:3456::1", /unique local/],
  ["fd00:ec2::254", /metadata/],
  ["fe80::1", /link-local/],
  ["fe80::1%eth0", /link-local/],
  ["fec0::1", /site-local/],
  ["ff02::1", /multicast/],
  ["::ffff:127.0.0.1", /IPv4-mapped loopback/],
  ["::ffff:7f00:1", /IPv4-mapped loopback/],
  ["::ffff:169.254.169.254", /IPv4-mapped cloud metadata/],
  ["::ffff:0:10.0.0.1", /IPv4-translated private/],
  ["::127.0.0.1", /IPv4-compatible/],
  ["::8.8.8.8", /IPv4-compatible/],
  ["64:ff9b::127.0.0.1", /NAT64 loopback/],
  ["64:ff9b::a9fe:a9fe", /NAT64 cloud metadata/],
  ["64:ff9b:1::1", /NAT64 \(local use\)/],
  ["2002:7f00:1::", /6to4 loopback/],
  ["2002:a00:1::1", /6to4 private/],
  ["2001::1", /reserved/], // Teredo
  ["2001:db8::1", /documentation/],
  ["100::1", /discard/],
  ["5f00::1", /not global unicast/],
  // inet_aton spellings mean what they say
  ["0177.0.0.1", /loopback/],
  ["2130706433", /loopback/],
  ["0x7f.1", /loopback/],
  ["127.1", /loopback/],
  ["not-an-ip", /not an IP address/],
  ["", /not an IP address/],
];

const allowed = [
  "8.8.8.8",
  "1.1.1.1",
  "93.184.216.34",
  "172.32.0.1", // just outside 172.16/12
  "100.128.0.1", // just outside 100.64/10
  "192.169.0.1",
  "11.0.0.1",
  "223.255.255.254",
  "2606:4700::1111",
  "2001:4860:4860::8888",
  "2a00:1450:4001::200e",
  "::ffff:8.8.8.8", // mapped public IPv4 is that IPv4
  "64:ff9b::808:808", // NAT64 of 8.8.8.8
  "2002:808:808::1", // 6to4 of 8.8.8.8
];

describe("isForbiddenAddress", () => {
  it.each(forbidden)("refuses %s (%s)", (address, reason) => {
    expect(isForbiddenAddress(address)).toBe(true);
    expect(forbiddenReason(address)).toMatch(reason);
  });

  it.each(allowed)("allows the public address %s", (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

const resolveTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }) as const);

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

describe("checkUrl", () => {
  const strict = { allowHosts: [] };

  it("accepts a public host and returns the addresses it checked", async () => {
    const checked = await checkUrl("https://example.com/a?b=1", strict, resolveTo("93.184.216.34"));
    expect(checked.url.href).toBe("https://example.com/a?b=1");
    expect(checked.addresses).toEqual(["93.184.216.34"]);
  });

  it.each([
    "ftp://example.com/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "gopher://example.com/",
    "not a url",
    "http://user:secret@example.com/",
    "http://user@example.com/",
  ])("refuses %s as invalid_url", async (url) => {
    const error = await refusal(checkUrl(url, strict, resolveTo("93.184.216.34")));
    expect(error.kind).toBe("invalid_url");
    expect(error.message).not.toContain("secret");
    expect(JSON.stringify(error.context)).not.toContain("secret");
  });

  it.each([
    "http://127.0.0.1/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://127.0.0.1./",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[64:ff9b::7f00:1]/",
    "http://0/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://10.0.0.1/",
    "http://100.64.0.1/",
    "http://100.100.100.200/",
  ])("refuses the literal %s without asking DNS", async (url) => {
    const lookup = vi.fn(resolveTo("93.184.216.34"));
    const error = await refusal(checkUrl(url, strict, lookup));
    expect(error.kind).toBe("blocked");
    expect(lookup).not.toHaveBeenCalled();
  });

  it("refuses a name that resolves to loopback", async () => {
    const error = await refusal(
      checkUrl("http://internal.example.com/", strict, resolveTo("127.0.0.1")),
    );
    expect(error.kind).toBe("blocked");
    expect(error.context).toMatchObject({ host: "internal.example.com", address: "127.0.0.1" });
  });

  it("refuses a name when any one of its addresses is forbidden", async () => {
    const error = await refusal(
      checkUrl("http://mixed.example.com/", strict, resolveTo("93.184.216.34", "10.1.2.3")),
    );
    expect(error.kind).toBe("blocked");
    expect(error.context).toMatchObject({ address: "10.1.2.3", reason: "private" });
  });

  it("allows what allowHosts lists: host names, addresses and CIDR ranges", async () => {
    const loopback = resolveTo("127.0.0.1", "::1");
    await expect(
      checkUrl("http://localhost:8080/", { allowHosts: ["localhost"] }, loopback),
    ).resolves.toMatchObject({ addresses: ["127.0.0.1", "::1"] });
    await expect(
      checkUrl("http://LOCALHOST./", { allowHosts: ["localhost"] }, loopback),
    ).resolves.toBeDefined();
    await expect(
      checkUrl("http://127.0.0.1:9/", { allowHosts: ["127.0.0.1"] }, loopback),
    ).resolves.toBeDefined();
    await expect(
      checkUrl("http://[::ffff:127.0.0.1]/", { allowHosts: ["127.0.0.1"] }, loopback),
    ).resolves.toBeDefined();
    await expect(
      checkUrl("http://[::1]/", { allowHosts: ["[::1]"] }, loopback),
    ).resolves.toBeDefined();
    await expect(
      checkUrl("http://10.9.8.7/", { allowHosts: ["10.0.0.0/8"] }, loopback),
    ).resolves.toBeDefined();
  });

  it("does not let an allowance for one address or name cover another", async () => {
    const loopback = resolveTo("127.0.0.1", "::1");
    // localhost also resolves to ::1, which 127.0.0.1 does not cover.
    expect(
      (await refusal(checkUrl("http://localhost/", { allowHosts: ["127.0.0.1"] }, loopback))).kind,
    ).toBe("blocked");
    expect(
      (
        await refusal(
          checkUrl("http://10.0.0.1/", { allowHosts: ["127.0.0.0/8", "bad/cidr"] }, loopback),
        )
      ).kind,
    ).toBe("blocked");
    expect(
      (await refusal(checkUrl("http://evil.localhost/", { allowHosts: ["localhost"] }, loopback)))
        .kind,
    ).toBe("blocked");
  });

  it("reports a failed lookup as a network error", async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    expect((await refusal(checkUrl("http://nowhere.invalid/", strict, failing))).kind).toBe(
      "network",
    );
    expect((await refusal(checkUrl("http://empty.example/", strict, resolveTo()))).kind).toBe(
      "network",
    );
  });
});
