import { marshall, unmarshall } from "@aws-sdk/util-dynamodb";
import { describe, expect, it } from "vitest";
import { decodeJsonFields, encodeJsonField, encodeJsonFields, jsonFieldStored } from "./json-text";

/** The item as DynamoDB gives it back (binary attributes come back as Uint8Array). */
const stored = (item: Record<string, unknown>) => unmarshall(marshall(item));

const result = {
  status: "succeeded",
  output: "Flesch reading ease 91.4 (very easy); Flesch-Kincaid grade 3.6.\n".repeat(4),
  data: { sentences: 3, words: 37, big: 1e300, nested: [{ a: "é\u0000𝄞" }] },
  citations: [],
};

describe("JSON fields as stored", () => {
  it("keeps text under <field>Json without compression, as before", () => {
    const item = encodeJsonFields({ id: "x", detail: result }, ["detail"]);
    expect(item).toEqual({ id: "x", detailJson: JSON.stringify(result) });
    expect(decodeJsonFields(stored(item), ["detail"])).toEqual({ id: "x", detail: result });
  });

  it("deflates a long field under <field>Z when asked, and reads it back exactly", () => {
    const item = encodeJsonFields({ id: "x", detail: result }, ["detail"], { compress: true });
    expect(item.detailJson).toBeUndefined();
    expect(item.detailZ).toBeInstanceOf(Uint8Array);
    expect((item.detailZ as Uint8Array).length).toBeLessThan(JSON.stringify(result).length);
    expect(decodeJsonFields(stored(item), ["detail"])).toEqual({ id: "x", detail: result });
  });

  it("keeps a short field as text even when asked to compress", () => {
    const item = encodeJsonFields({ detail: { ok: true } }, ["detail"], { compress: true });
    expect(item).toEqual({ detailJson: '{"ok":true}' });
  });

  it("never stores a field larger than its text, and reads back whatever form it took", () => {
    const noise = (n: number) =>
      Array.from({ length: n }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 94))).join("");
    for (const value of [{ noise: noise(300) }, { noise: noise(5_000) }, "x".repeat(300), result]) {
      const text = JSON.stringify(value);
      const item = encodeJsonFields({ value }, ["value"], { compress: true });
      // Counted as DynamoDB counts an item: the attribute's name and its value.
      const size =
        item.valueZ instanceof Uint8Array
          ? "valueZ".length + item.valueZ.length
          : "valueJson".length + Buffer.byteLength(String(item.valueJson));
      expect(size).toBeLessThanOrEqual("valueJson".length + Buffer.byteLength(text));
      expect(decodeJsonFields(stored(item), ["value"])).toEqual({ value });
    }
  });

  it("leaves out a field whose deflated text is damaged, like text that does not parse", () => {
    const item = encodeJsonFields({ id: "x", detail: result }, ["detail"], { compress: true });
    const damaged = { ...item, detailZ: new Uint8Array([1, 2, 3, 4]) };
    expect(decodeJsonFields(damaged, ["detail"])).toEqual({ id: "x" });
    expect(decodeJsonFields({ id: "x", detailJson: "{" }, ["detail"])).toEqual({ id: "x" });
  });

  it("gives an update the attribute and value encodeJsonFields would store, in either form", () => {
    for (const value of [result, { ok: true }]) {
      const { attribute, value: encoded } = encodeJsonField("result", value, { compress: true });
      const item = { [attribute]: encoded };
      expect(item).toEqual(encodeJsonFields({ result: value }, ["result"], { compress: true }));
      expect(decodeJsonFields(stored(item), ["result"])).toEqual({ result: value });
    }
    expect(encodeJsonField("result", result).attribute).toBe("resultJson");
    expect(encodeJsonField("result", result, { compress: true }).attribute).toBe("resultZ");
  });

  it("asks whether a field is stored by both of its attributes", () => {
    const { condition, names } = jsonFieldStored("result");
    const attributes = condition.match(/#\w+/g)?.map((name) => names[name]);
    expect(attributes?.sort()).toEqual(["resultJson", "resultZ"]);
    expect(condition).toMatch(/^\(attribute_exists\(#\w+\) OR attribute_exists\(#\w+\)\)$/);
  });

  it("reads a field stored the old way, as a map", () => {
    expect(decodeJsonFields({ detail: { ok: true } }, ["detail"])).toEqual({
      detail: { ok: true },
    });
  });
});
