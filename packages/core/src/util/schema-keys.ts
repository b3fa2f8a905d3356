import type { z } from "zod";

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * The keys an object schema knows at `path` inside `schema` (through optional, default, array,
 * record and union layers): what an unknown key there was probably meant to be.
 */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const found = new Set<string>();
  const walk = (current: z.ZodType, depth: number) => {
    const def = defOf(current);
    const wrapped = def.innerType ?? (def.type === "pipe" ? def.in : undefined);
    if (wrapped) return walk(wrapped, depth);
    if (def.type === "union") {
      for (const option of def.options ?? []) walk(option, depth);
      return;
    }
    if (depth === path.length) {
      for (const key of Object.keys(def.shape ?? {})) found.add(key);
      return;
    }
    const step = path[depth];
    if (def.type === "object") {
      const next = def.shape?.[String(step)];
      if (next) walk(next, depth + 1);
    } else if (def.type === "array" && def.element) {
      walk(def.element, depth + 1);
    } else if (def.type === "record" && def.valueType) {
      walk(def.valueType, depth + 1);
    }
  };
  walk(schema, 0);
  return [...found];
}
