import { describe, expect, it } from "vitest";
import { compileCidr, ipFamily } from "./cidr";

const refuse = (reason: string): never => {
  throw new Error(reason);
};

describe("IP address parsing", () => {
  it.each([
    ["10.0.0.1", 4],
    ["255.255.255.255", 4],
    ["0.0.0.0", 4],
    ["::", 6],
    ["::1", 6],
    ["1::", 6],
    ["2001:db8::8a2e:370:7334", 6],
    ["2001:0db8:85a3:0000:0000:8a2e:0370:7334", 6],
    ["FE80::1", 6],
    ["1:2:3:4:5:6:7::", 6],
    ["::1.2.3.4", 6],
    ["::ffff:10.0.0.1", 4],
    ["::ffff:a00:1", 4],
  ] as const)("reads %s as IPv%i", (text, family) => {
    expect(ipFamily(text)).toBe(family);
  });

  it.each([
    "",
    "10.0.0",
    "10.0.0.1.1",
    "10.0.0.256",
    "10.0.0.-1",
    "10..0.1",
    "1000.0.0.1",
    " 10.0.0.1",
    ":",
    ":::",
    "1:2",
    "1:2:3:4:5:6:7:8:9",
    "1::2::3",
    "12345::",
    "g::1",
    "1:2:3:4:5:6:7:8::",
    "::1.2.3",
    "1:",
    ":1",
    "fe80::1%eth0",
  ])("rejects %j as an IP address", (text) => {
    expect(ipFamily(text)).toBeUndefined();
  });
});

describe("compileCidr", () => {
  it("treats an IPv4-mapped IPv6 block as the IPv4 block it maps", () => {
    const test = compileCidr("::ffff:10.0.0.0/120", refuse);
    expect(test("10.0.0.200")).toBe(true);
    expect(test("10.0.1.0")).toBe(false);
  });

  it("compares every 32-bit word of an IPv6 address under a long prefix", () => {
    const test = compileCidr("2001:db8:1:2:3:4:5:0/112", refuse);
    expect(test("2001:db8:1:2:3:4:5:ffff")).toBe(true);
    expect(test("2001:db8:1:2:3:4:6:0")).toBe(false);
    expect(test("2001:db8:1:3:3:4:5:0")).toBe(false);
  });

  it("reports a malformed block through the fail callback", () => {
    expect(() => compileCidr("10.0.0.0/", refuse)).toThrow('invalid prefix length ""');
  });
});
