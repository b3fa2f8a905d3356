import type { Target } from "./schemas";

/**
 * What a target receives for one event: the whole envelope by default, or what the target's
 * Input / InputPath / InputTransformer make of it, as EventBridge does before invoking.
 */
export function targetInput(target: Target, envelope: object, ruleName: string): unknown {
  if (target.Input !== undefined) return parseJsonOr(target.Input);
  if (target.InputPath !== undefined) return readPath(envelope, target.InputPath);
  if (target.InputTransformer !== undefined) {
    const { InputPathsMap = {}, InputTemplate } = target.InputTransformer;
    const values: Record<string, unknown> = {
      "aws.events.rule-name": ruleName,
      "aws.events.event": envelope,
      "aws.events.event.json": envelope,
    };
    for (const [key, path] of Object.entries(InputPathsMap)) values[key] = readPath(envelope, path);
    const filled = InputTemplate.replace(/<([\w.-]+)>/g, (whole, key: string) => {
      if (!(key in values)) return whole;
      const value = values[key];
      return typeof value === "string" ? value : JSON.stringify(value ?? null);
    });
    return parseJsonOr(filled);
  }
  return envelope;
}

/** Reads a JSONPath of the simple form EventBridge accepts: `$`, `$.a.b`, `$.a[0]`, `$['a']`. */
function readPath(value: unknown, path: string): unknown {
  if (!path.startsWith("$")) return undefined;
  const steps = [...path.slice(1).matchAll(/\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/g)].map(
    (m) => m[1] ?? m[3] ?? Number(m[2]),
  );
  let current: unknown = value;
  for (const step of steps) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
