import type { Schema } from "@cfworker/json-schema";

/**
 * The meta-schemas a registered schema is checked against before it is used, so a broken one
 * is refused at registration. @cfworker/json-schema validates instances only; these let it
 * validate schemas too.
 *
 * Draft-07's is the published document. 2020-12's is published as a set of vocabularies tied
 * together with `$dynamicRef`, which cfworker does not follow: this is the same set of
 * keywords and constraints in one document, each `$dynamicRef: "#meta"` a plain `$ref: "#"`.
 */

const simpleTypes: Schema = {
  enum: ["array", "boolean", "integer", "null", "number", "object", "string"],
};
const stringArray: Schema = {
  type: "array",
  items: { type: "string" },
  uniqueItems: true,
  default: [],
};
const nonNegativeInteger: Schema = { type: "integer", minimum: 0 };

export const DRAFT_07_META: Schema = {
  $id: "http://json-schema.org/draft-07/schema#",
  definitions: {
    schemaArray: { type: "array", minItems: 1, items: { $ref: "#" } },
    nonNegativeInteger,
    nonNegativeIntegerDefault0: {
      allOf: [{ $ref: "#/definitions/nonNegativeInteger" }, { default: 0 }],
    },
    simpleTypes,
    stringArray,
  },
  type: ["object", "boolean"],
  properties: {
    $id: { type: "string", format: "uri-reference" },
    $schema: { type: "string", format: "uri" },
    $ref: { type: "string", format: "uri-reference" },
    $comment: { type: "string" },
    title: { type: "string" },
    description: { type: "string" },
    default: true,
    readOnly: { type: "boolean", default: false },
    writeOnly: { type: "boolean", default: false },
    examples: { type: "array", items: true },
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    maximum: { type: "number" },
    exclusiveMaximum: { type: "number" },
    minimum: { type: "number" },
    exclusiveMinimum: { type: "number" },
    maxLength: { $ref: "#/definitions/nonNegativeInteger" },
    minLength: { $ref: "#/definitions/nonNegativeIntegerDefault0" },
    pattern: { type: "string", format: "regex" },
    additionalItems: { $ref: "#" },
    items: { anyOf: [{ $ref: "#" }, { $ref: "#/definitions/schemaArray" }], default: true },
    maxItems: { $ref: "#/definitions/nonNegativeInteger" },
    minItems: { $ref: "#/definitions/nonNegativeIntegerDefault0" },
    uniqueItems: { type: "boolean", default: false },
    contains: { $ref: "#" },
    maxProperties: { $ref: "#/definitions/nonNegativeInteger" },
    minProperties: { $ref: "#/definitions/nonNegativeIntegerDefault0" },
    required: { $ref: "#/definitions/stringArray" },
    additionalProperties: { $ref: "#" },
    definitions: { type: "object", additionalProperties: { $ref: "#" }, default: {} },
    properties: { type: "object", additionalProperties: { $ref: "#" }, default: {} },
    patternProperties: {
      type: "object",
      additionalProperties: { $ref: "#" },
      propertyNames: { format: "regex" },
      default: {},
    },
    dependencies: {
      type: "object",
      additionalProperties: { anyOf: [{ $ref: "#" }, { $ref: "#/definitions/stringArray" }] },
    },
    propertyNames: { $ref: "#" },
    const: true,
    enum: { type: "array", items: true },
    type: {
      anyOf: [
        { $ref: "#/definitions/simpleTypes" },
        {
          type: "array",
          items: { $ref: "#/definitions/simpleTypes" },
          minItems: 1,
          uniqueItems: true,
        },
      ],
    },
    format: { type: "string" },
    contentMediaType: { type: "string" },
    contentEncoding: { type: "string" },
    if: { $ref: "#" },
    // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, never awaited
    then: { $ref: "#" },
    else: { $ref: "#" },
    allOf: { $ref: "#/definitions/schemaArray" },
    anyOf: { $ref: "#/definitions/schemaArray" },
    oneOf: { $ref: "#/definitions/schemaArray" },
    not: { $ref: "#" },
  },
  default: true,
};

const schemaMap: Schema = { type: "object", additionalProperties: { $ref: "#" } };

export const DRAFT_2020_12_META: Schema = {
  $id: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    schemaArray: { type: "array", minItems: 1, items: { $ref: "#" } },
    nonNegativeInteger,
    nonNegativeIntegerDefault0: { $ref: "#/$defs/nonNegativeInteger", default: 0 },
    simpleTypes,
    stringArray,
    uriString: { type: "string", format: "uri" },
    uriReferenceString: { type: "string", format: "uri-reference" },
    anchorString: { type: "string", pattern: "^[A-Za-z_][-A-Za-z0-9._]*$" },
  },
  type: ["object", "boolean"],
  properties: {
    // core
    $id: { $ref: "#/$defs/uriReferenceString", pattern: "^[^#]*#?$" },
    $schema: { $ref: "#/$defs/uriString" },
    $ref: { $ref: "#/$defs/uriReferenceString" },
    $anchor: { $ref: "#/$defs/anchorString" },
    $dynamicRef: { $ref: "#/$defs/uriReferenceString" },
    $dynamicAnchor: { $ref: "#/$defs/anchorString" },
    $vocabulary: {
      type: "object",
      propertyNames: { $ref: "#/$defs/uriString" },
      additionalProperties: { type: "boolean" },
    },
    $comment: { type: "string" },
    $defs: schemaMap,
    // applicator
    prefixItems: { $ref: "#/$defs/schemaArray" },
    items: { $ref: "#" },
    contains: { $ref: "#" },
    additionalProperties: { $ref: "#" },
    properties: { ...schemaMap, default: {} },
    patternProperties: { ...schemaMap, propertyNames: { format: "regex" }, default: {} },
    dependentSchemas: { ...schemaMap, default: {} },
    propertyNames: { $ref: "#" },
    if: { $ref: "#" },
    // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, never awaited
    then: { $ref: "#" },
    else: { $ref: "#" },
    allOf: { $ref: "#/$defs/schemaArray" },
    anyOf: { $ref: "#/$defs/schemaArray" },
    oneOf: { $ref: "#/$defs/schemaArray" },
    not: { $ref: "#" },
    // unevaluated
    unevaluatedItems: { $ref: "#" },
    unevaluatedProperties: { $ref: "#" },
    // validation
    type: {
      anyOf: [
        { $ref: "#/$defs/simpleTypes" },
        { type: "array", items: { $ref: "#/$defs/simpleTypes" }, minItems: 1, uniqueItems: true },
      ],
    },
    const: true,
    enum: { type: "array", items: true },
    multipleOf: { type: "number", exclusiveMinimum: 0 },
    maximum: { type: "number" },
    exclusiveMaximum: { type: "number" },
    minimum: { type: "number" },
    exclusiveMinimum: { type: "number" },
    maxLength: { $ref: "#/$defs/nonNegativeInteger" },
    minLength: { $ref: "#/$defs/nonNegativeIntegerDefault0" },
    pattern: { type: "string", format: "regex" },
    maxItems: { $ref: "#/$defs/nonNegativeInteger" },
    minItems: { $ref: "#/$defs/nonNegativeIntegerDefault0" },
    uniqueItems: { type: "boolean", default: false },
    maxContains: { $ref: "#/$defs/nonNegativeInteger" },
    minContains: { $ref: "#/$defs/nonNegativeInteger", default: 1 },
    maxProperties: { $ref: "#/$defs/nonNegativeInteger" },
    minProperties: { $ref: "#/$defs/nonNegativeIntegerDefault0" },
    required: { $ref: "#/$defs/stringArray" },
    dependentRequired: { type: "object", additionalProperties: { $ref: "#/$defs/stringArray" } },
    // meta-data
    title: { type: "string" },
    description: { type: "string" },
    default: true,
    deprecated: { type: "boolean", default: false },
    readOnly: { type: "boolean", default: false },
    writeOnly: { type: "boolean", default: false },
    examples: { type: "array", items: true },
    // format-annotation
    format: { type: "string" },
    // content
    contentEncoding: { type: "string" },
    contentMediaType: { type: "string" },
    contentSchema: { $ref: "#" },
    // kept from earlier drafts, as the published 2020-12 meta-schema keeps them
    definitions: schemaMap,
    dependencies: {
      type: "object",
      additionalProperties: { anyOf: [{ $ref: "#" }, { $ref: "#/$defs/stringArray" }] },
    },
    $recursiveAnchor: { $ref: "#/$defs/anchorString" },
    $recursiveRef: { $ref: "#/$defs/uriReferenceString" },
  },
};
