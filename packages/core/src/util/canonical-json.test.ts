import { describe, expect, it } from "vitest";
import { canonicalJson, sha256Hex } from "./canonical-json";

describe("canonicalJson", () => {
  it("serializes objects the same whatever the order of their keys, at every depth", () => {
    const a = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } };
    const b = { a: { c: null, d: [3, { y: 2, z: 1 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it("keeps array order, because order is meaning in arrays", () => {
    expect(sha256Hex(canonicalJson([1, 2]))).not.toBe(sha256Hex(canonicalJson([2, 1])));
  });
});
