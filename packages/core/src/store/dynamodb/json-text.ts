import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * Free-form JSON that callers, tools and upstreams choose (a call's input and result, an
 * event's detail, a cached value, a tool's schemas and examples) is stored as JSON text, not
 * as DynamoDB maps and numbers: DynamoDB numbers stop at 38 digits and 1e126 (JSON allows
 * 1e308), the marshaller refuses anything beyond 2^53 and reads it back as a BigInt, and maps
 * nest at most 32 levels. Text keeps exactly what `JSON.parse` gave, whatever it is.
 *
 * The text goes in `<field>Json`. Items written before this kept the value as a map under the
 * field's own name; those are read as they are, so existing data needs no migration.
 *
 * Remove that map read (decodeJsonFields keeping a field without `<field>Json`) after
 * 2027-03-31. Only versions before 2026-11-24 wrote maps, before any stage ran on AWS, so only
 * a local table kept on disk by `npm start` can hold them. Cached results expire (their TTL
 * is the tool's cache policy), but calls, run logs and tool specs have no TTL: `npm start`
 * seeds the built-in specs again, and the release that drops this read must say that a state
 * dir from before 2026-11-24 is to be deleted.
 */
const SUFFIX = "Json";

/**
 * A field may keep its text deflated instead, a binary `<field>Z` (raw DEFLATE of the UTF-8 JSON
 * text): DynamoDB bills a write per started KB of the whole item, and a result compresses to
 * about half (JSON repeats its keys, and an event its run and call ids). Only text of
 * MIN_COMPRESSED_TEXT characters or more is tried, and only a smaller form is kept, so short
 * values stay readable text. Readers take either form; a reader from before this form (an older
 * release still running during a deploy, or rolled back to) cannot read it.
 *
 * Which form a value takes depends on the value, so a field is stored this way only where each
 * value is written once: rewritten, a value could leave its other form behind, and a reader
 * takes the text first. Items written once and never changed (a run's log entries, the stage
 * stream's chunks) qualify whole. So do a call's input and result, though the call item itself
 * is updated: its input is written only by puts of the whole item (the one that creates it,
 * and those that write it whole again, which encode every field afresh), and its result once,
 * by the conditional update that finishes the call (it applies only to a call that has none).
 * Updates set such a field with encodeJsonField and ask whether it is there with
 * jsonFieldStored, which name both forms. call-runs.ts decides how a call's are written.
 */
const COMPRESSED_SUFFIX = "Z";
/**
 * 256 until a call item could leave out what its keys repeat (call-item-form.ts): an agent's
 * input of a couple of hundred characters then decides whether a small call's item fits 1 KB.
 */
const MIN_COMPRESSED_TEXT = 128;
/**
 * Bytes a stored field inflates to, at most: far above any value Toolbus writes (an event, a
 * call's input or result: each well under 1 MB of text, as requests and results are capped),
 * and a bound on what a damaged or foreign value can make a reader allocate.
 */
const MAX_INFLATED = 8 * 1024 * 1024;

interface EncodeOptions {
  /** Keep a long field's text deflated when that is smaller (see COMPRESSED_SUFFIX). */
  compress?: boolean;
}

/**
 * The item with each of `fields` present replaced by its JSON text under `<field>Json`, or
 * with `compress`, by the deflated text under `<field>Z` where that is smaller.
 */
export function encodeJsonFields(
  item: Record<string, unknown>,
  fields: readonly string[],
  options: EncodeOptions = {},
): Record<string, unknown> {
  const encoded = { ...item };
  for (const field of fields) {
    if (encoded[field] === undefined) continue;
    const text = JSON.stringify(encoded[field]);
    delete encoded[field];
    const deflated = options.compress ? deflatedText(text) : undefined;
    if (deflated) encoded[`${field}${COMPRESSED_SUFFIX}`] = deflated;
    else encoded[`${field}${SUFFIX}`] = text;
  }
  return encoded;
}

/** The inverse of encodeJsonFields; a field stored the old way (a map) is kept as it is. */
export function decodeJsonFields(
  item: Record<string, unknown>,
  fields: readonly string[],
): Record<string, unknown> {
  const decoded = { ...item };
  for (const field of fields) {
    const stored = decoded[`${field}${SUFFIX}`];
    const deflated = decoded[`${field}${COMPRESSED_SUFFIX}`];
    if (typeof stored !== "string" && !(deflated instanceof Uint8Array)) continue;
    delete decoded[`${field}${SUFFIX}`];
    delete decoded[`${field}${COMPRESSED_SUFFIX}`];
    // Text that does not parse (or inflate) leaves the field out, so the model's schema names
    // the item.
    try {
      const text =
        typeof stored === "string"
          ? stored
          : inflateRawSync(deflated as Uint8Array, { maxOutputLength: MAX_INFLATED }).toString();
      decoded[field] = JSON.parse(text);
    } catch {
      delete decoded[field];
    }
  }
  return decoded;
}

/** The text deflated, if it is long enough to try and comes out smaller (in bytes). */
function deflatedText(text: string): Buffer | undefined {
  if (text.length < MIN_COMPRESSED_TEXT) return undefined;
  const deflated = deflateRawSync(text);
  // The binary attribute's name is 3 bytes shorter than the text's.
  return deflated.length < Buffer.byteLength(text) + SUFFIX.length - COMPRESSED_SUFFIX.length
    ? deflated
    : undefined;
}

/**
 * One field as encodeJsonFields stores it, for an update expression: the attribute it goes
 * under (text or deflated, whichever encodeJsonFields picks) and the value stored there.
 */
export function encodeJsonField(
  field: string,
  value: unknown,
  options: EncodeOptions = {},
): { attribute: string; value: unknown } {
  const [stored] = Object.entries(encodeJsonFields({ [field]: value }, [field], options));
  if (!stored) {
    throw new TypeError(`${field} has no JSON value to store.`);
  }
  const [attribute, encoded] = stored;
  return { attribute, value: encoded };
}

/**
 * A condition that the field is stored, as text or deflated (whichever form its writer took),
 * with the attribute names it uses, to merge into ExpressionAttributeNames.
 */
export function jsonFieldStored(field: string): {
  condition: string;
  names: Record<string, string>;
} {
  const text = `#${field}${SUFFIX}`;
  const deflated = `#${field}${COMPRESSED_SUFFIX}`;
  return {
    condition: `(attribute_exists(${text}) OR attribute_exists(${deflated}))`,
    names: { [text]: jsonAttribute(field), [deflated]: `${field}${COMPRESSED_SUFFIX}` },
  };
}

/** The attribute a field's JSON text is stored under, for update expressions. */
export const jsonAttribute = (field: string): string => `${field}${SUFFIX}`;
