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

/** The item with each of `fields` present replaced by its JSON text under `<field>Json`. */
export function encodeJsonFields(
  item: Record<string, unknown>,
  fields: readonly string[],
): Record<string, unknown> {
  const encoded = { ...item };
  for (const field of fields) {
    if (encoded[field] === undefined) continue;
    encoded[`${field}${SUFFIX}`] = JSON.stringify(encoded[field]);
    delete encoded[field];
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
    const text = decoded[`${field}${SUFFIX}`];
    if (typeof text !== "string") continue;
    delete decoded[`${field}${SUFFIX}`];
    // Text that does not parse leaves the field out, so the model's schema names the item.
    try {
      decoded[field] = JSON.parse(text);
    } catch {
      delete decoded[field];
    }
  }
  return decoded;
}

/** The attribute a field's JSON text is stored under, for update expressions. */
export const jsonAttribute = (field: string): string => `${field}${SUFFIX}`;
