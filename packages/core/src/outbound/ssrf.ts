import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { OutboundError } from "./errors";
import type { OutboundConfig } from "./types";

/** One address a host name resolved to, as node:dns `lookup(..., { all: true })` returns it. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has; tests pass their own to simulate DNS. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

type Embedded = (address: ipaddr.IPv6) => ipaddr.IPv4;

interface Range {
  cidr: string;
  /** Why the range is refused; shows up in the error context. */
  reason: string;
  /**
   * For IPv6 forms that carry an IPv4 address: the packet ends up at that IPv4 address, so the
   * IPv4 address decides, not the prefix.
   */
  embedded?: Embedded;
}

const lastFourBytes: Embedded = (address) => {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12, 16));
};

/** 6to4 (RFC 3056): 2002:AABB:CCDD::/48 carries IPv4 AA.BB.CC.DD in bits 16..47. */
const sixToFour: Embedded = (address) => {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(2, 6));
};

/**
 * Every IPv4 range a caller-supplied URL may not reach. Written out rather than taken from
 * ipaddr.js's `range()` so that a library update cannot silently open a range, and so the
 * table reads as the policy it is. Specific entries come first so the reason is precise.
 */
const ipv4Ranges: Range[] = [
  { cidr: "169.254.169.254/32", reason: "cloud metadata" }, // AWS, GCP, Azure, OCI
  { cidr: "100.100.100.200/32", reason: "cloud metadata" }, // Alibaba Cloud
  { cidr: "0.0.0.0/8", reason: "unspecified" },
  { cidr: "10.0.0.0/8", reason: "private" },
  { cidr: "100.64.0.0/10", reason: "carrier-grade NAT" },
  { cidr: "127.0.0.0/8", reason: "loopback" },
  { cidr: "169.254.0.0/16", reason: "link-local" },
  { cidr: "172.16.0.0/12", reason: "private" },
  { cidr: "192.0.0.0/24", reason: "reserved (IETF protocol assignments)" },
  { cidr: "192.0.2.0/24", reason: "reserved (documentation)" },
  { cidr: "192.88.99.0/24", reason: "reserved (6to4 relay anycast)" },
  { cidr: "192.168.0.0/16", reason: "private" },
  { cidr: "198.18.0.0/15", reason: "reserved (benchmarking)" },
  { cidr: "198.51.100.0/24", reason: "reserved (documentation)" },
  { cidr: "203.0.113.0/24", reason: "reserved (documentation)" },
  { cidr: "224.0.0.0/4", reason: "multicast" },
  { cidr: "255.255.255.255/32", reason: "broadcast" },
  { cidr: "240.0.0.0/4", reason: "reserved" },
];

/** Every IPv6 range a caller-supplied URL may not reach, plus the forms embedding IPv4. */
const ipv6Ranges: Range[] = [
  { cidr: "fd00:ec2::254/128", reason: "cloud metadata" }, // AWS IMDS over IPv6
  { cidr: "::/128", reason: "unspecified" },
  { cidr: "::1/128", reason: "loopback" },
  { cidr: "::ffff:0:0/96", reason: "IPv4-mapped", embedded: lastFourBytes },
  { cidr: "::ffff:0:0:0/96", reason: "IPv4-translated", embedded: lastFourBytes },
  { cidr: "64:ff9b::/96", reason: "NAT64", embedded: lastFourBytes },
  { cidr: "2002::/16", reason: "6to4", embedded: sixToFour },
  { cidr: "::/96", reason: "IPv4-compatible (deprecated)" },
  { cidr: "64:ff9b:1::/48", reason: "NAT64 (local use)" },
  { cidr: "100::/64", reason: "reserved (discard)" },
  // Teredo, benchmarking, ORCHID and other protocol assignments; Teredo tunnels to IPv4.
  { cidr: "2001::/23", reason: "reserved (IETF protocol assignments)" },
  { cidr: "2001:db8::/32", reason: "reserved (documentation)" },
  { cidr: "3fff::/20", reason: "reserved (documentation)" },
  { cidr: "fc00::/7", reason: "private (unique local)" },
  { cidr: "fe80::/10", reason: "link-local" },
  { cidr: "fec0::/10", reason: "reserved (site-local)" },
  { cidr: "ff00::/8", reason: "multicast" },
];

/** Only global unicast IPv6 is routable on the internet; anything else is refused. */
const ipv6GlobalUnicast = ipaddr.parseCIDR("2000::/3");

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

const parsedV4 = ipv4Ranges.map((range) => ({ ...range, parsed: ipaddr.parseCIDR(range.cidr) }));
const parsedV6 = ipv6Ranges.map((range) => ({ ...range, parsed: ipaddr.parseCIDR(range.cidr) }));

function parseAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let text = ip.trim();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  // A zone id (fe80::1%eth0) names an interface, not a different address.
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  try {
    if (text.includes(":")) {
      // ipaddr.js reads "::1.2.3.4" as ::ffff:1.2.3.4; the WHATWG parser gets it right, and
      // its canonical form has no dotted tail left to misread.
      if (isIP(text) !== 6) return undefined;
      return ipaddr.IPv6.parse(new URL(`http://[${text}]/`).hostname.slice(1, -1));
    }
    // Liberal on purpose: 0177.0.0.1, 0x7f.1, 127.1 and 2130706433 are read the way inet_aton
    // reads them, so those spellings are judged by what they mean.
    return ipaddr.IPv4.parse(text);
  } catch {
    return undefined;
  }
}

function inRange(address: ipaddr.IPv4 | ipaddr.IPv6, cidr: Cidr): boolean {
  return address.kind() === cidr[0].kind() && address.match(cidr);
}

function classify(address: ipaddr.IPv4 | ipaddr.IPv6): string | undefined {
  if (address.kind() === "ipv4") {
    return parsedV4.find((range) => inRange(address, range.parsed))?.reason;
  }
  const v6 = address as ipaddr.IPv6;
  for (const range of parsedV6) {
    if (!inRange(v6, range.parsed)) continue;
    if (!range.embedded) return range.reason;
    const inner = classify(range.embedded(v6));
    return inner === undefined ? undefined : `${range.reason} ${inner}`;
  }
  return inRange(v6, ipv6GlobalUnicast) ? undefined : "reserved (not global unicast)";
}

/**
 * Why an address may not be reached by a caller-supplied URL, or undefined when it may.
 * Anything that does not parse as an address is refused: the guard fails closed.
 */
export function forbiddenReason(ip: string): string | undefined {
  const address = parseAddress(ip);
  return address ? classify(address) : "not an IP address";
}

/** True for loopback, private, link-local, metadata and every other non-public address. */
export function isForbiddenAddress(ip: string): boolean {
  return forbiddenReason(ip) !== undefined;
}

interface AllowList {
  hosts: Set<string>;
  ranges: Cidr[];
}

function normalizeHost(host: string): string {
  let text = host.trim().toLowerCase();
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1);
  return text.endsWith(".") ? text.slice(0, -1) : text;
}

function allowList(entries: readonly string[]): AllowList {
  const hosts = new Set<string>();
  const ranges: Cidr[] = [];
  for (const entry of entries) {
    const text = normalizeHost(entry);
    if (text.includes("/")) {
      // A malformed CIDR allows nothing rather than breaking every request.
      if (ipaddr.isValidCIDR(text)) ranges.push(ipaddr.parseCIDR(text));
      continue;
    }
    const address = isIP(text) !== 0 ? parseAddress(text) : undefined;
    if (address) {
      ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
      continue;
    }
    hosts.add(text);
  }
  return { hosts, ranges };
}

function isAllowedAddress(ip: string, allowed: AllowList): boolean {
  const address = parseAddress(ip);
  if (!address) return false;
  // ::ffff:127.0.0.1 is 127.0.0.1 on the wire, so an allowance for one covers the other.
  const candidates: Array<ipaddr.IPv4 | ipaddr.IPv6> = [address];
  if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
    candidates.push((address as ipaddr.IPv6).toIPv4Address());
  }
  return candidates.some((candidate) => allowed.ranges.some((range) => inRange(candidate, range)));
}

function invalid(message: string, context: Record<string, unknown> = {}): OutboundError {
  return new OutboundError("invalid_url", message, { context });
}

/** Parses a URL and refuses anything but plain http(s) without credentials. */
export function parseOutboundUrl(input: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(input));
  } catch {
    // No cause: Node's URL error carries the input, which may hold a token in its query.
    throw new OutboundError("invalid_url", "the URL could not be parsed");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw invalid("only http: and https: URLs may be requested", { protocol: url.protocol });
  }
  if (url.username !== "" || url.password !== "") {
    throw invalid("URLs may not carry credentials", { host: url.host });
  }
  if (url.hostname === "") throw invalid("the URL has no host");
  return url;
}

/**
 * Parses `url`, resolves its host and refuses it unless every address it resolves to is public
 * or covered by `config.allowHosts`. The addresses returned are the ones that were checked;
 * the client connects to exactly those, so a second DNS answer cannot swap them (rebinding).
 */
export async function checkUrl(
  input: string | URL,
  config: Pick<OutboundConfig, "allowHosts">,
  lookup: Resolver,
): Promise<{ url: URL; addresses: string[] }> {
  const url = parseOutboundUrl(input);
  const host = normalizeHost(url.hostname);
  const allowed = allowList(config.allowHosts);

  let addresses: string[];
  if (isIP(host) !== 0) {
    // WHATWG URL parsing already turned decimal, octal, hex and short IPv4 forms into a dotted
    // quad and canonicalised IPv6, so a literal never needs DNS.
    addresses = [host];
  } else {
    let resolved: ResolvedAddress[];
    try {
      resolved = await lookup(host);
    } catch (cause) {
      throw new OutboundError("network", "the host name could not be resolved", {
        cause,
        context: { host },
      });
    }
    addresses = resolved.map((entry) => entry.address);
    if (addresses.length === 0) {
      throw new OutboundError("network", "the host name resolved to no address", {
        context: { host },
      });
    }
  }

  if (allowed.hosts.has(host)) return { url, addresses };
  for (const address of addresses) {
    const reason = forbiddenReason(address);
    if (reason !== undefined && !isAllowedAddress(address, allowed)) {
      throw new OutboundError("blocked", `the host resolves to a forbidden address (${reason})`, {
        context: { host, address, reason },
      });
    }
  }
  return { url, addresses };
}
