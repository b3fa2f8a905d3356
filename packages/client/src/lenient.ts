import * as z from "zod";

// The client reads answers with the wire's own schemas (@toolbus/wire/schemas), but leniently:
// every object of a schema becomes loose, so a field a newer server adds passes through
// instead of failing or disappearing. Everything else the schema says (required fields, ids,
// enums, refinements) still holds. One derivation here instead of a loose copy per view.

type Def = Record<string, unknown> & { type: string };

const loosened = new WeakMap<z.ZodType, z.ZodType>();

/** `schema` with every object in it loose (unknown keys kept), at any depth. */
export function lenient<T extends z.ZodType>(schema: T): T {
  return loosen(schema) as T;
}

function loosen(schema: z.ZodType): z.ZodType {
  const known = loosened.get(schema);
  if (known) return known;
  const made = rebuild(schema);
  loosened.set(schema, made);
  return made;
}

function rebuild(schema: z.ZodType): z.ZodType {
  const def = schema._zod.def as unknown as Def;
  const inner = (key: string) => loosen(def[key] as z.ZodType);
  switch (def.type) {
    case "object": {
      const shape = Object.fromEntries(
        Object.entries(def.shape as Record<string, z.ZodType>).map(([key, value]) => [
          key,
          loosen(value),
        ]),
      );
      // Its checks (refinements) stay: they are part of the def.
      return withDef(schema, { shape, catchall: z.unknown() });
    }
    case "array":
      return withDef(schema, { element: inner("element") });
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return withDef(schema, { innerType: inner("innerType") });
    case "union":
      return withDef(schema, { options: (def.options as z.ZodType[]).map(loosen) });
    case "intersection":
      return withDef(schema, { left: inner("left"), right: inner("right") });
    case "record":
      return withDef(schema, { valueType: inner("valueType") });
    case "tuple":
      return withDef(schema, {
        items: (def.items as z.ZodType[]).map(loosen),
        rest: def.rest ? inner("rest") : null,
      });
    case "pipe":
      return withDef(schema, { in: inner("in"), out: inner("out") });
    case "lazy": {
      const getter = def.getter as () => z.ZodType;
      return withDef(schema, { getter: () => loosen(getter()) });
    }
    default:
      return schema;
  }
}

/**
 * A new schema of the same kind with parts of its definition replaced. The definition's other
 * properties are copied as they are, getters included (a default's value is one: it hands out
 * a fresh copy each time).
 */
function withDef(schema: z.ZodType, replaced: Record<string, unknown>): z.ZodType {
  const def = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema._zod.def));
  for (const [key, value] of Object.entries(replaced)) {
    Object.defineProperty(def, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return schema.clone(def as typeof schema._zod.def);
}
