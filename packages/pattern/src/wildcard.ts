/**
 * The `wildcard` operator: `*` matches any run of characters (including none), `\*` is a literal
 * star and `\\` a literal backslash. Consecutive stars and any other escape are refused, as AWS
 * refuses them, so a mistake shows up locally rather than at deploy time.
 */

export type StringTest = (value: string) => boolean;

/**
 * Splits the pattern at its unescaped stars into literal segments (escapes resolved), or
 * returns why it is invalid. The pattern index anchors on the first and last segments.
 */
export function wildcardSegments(pattern: string): string[] | string {
  const segments: string[] = [];
  let current = "";
  let previousWasStar = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i];
    if (char === "*") {
      if (previousWasStar) {
        return `consecutive wildcard characters at position ${i} in "${pattern}"`;
      }
      segments.push(current);
      current = "";
      previousWasStar = true;
      continue;
    }
    previousWasStar = false;
    if (char === "\\") {
      const next = pattern[i + 1];
      if (next !== "*" && next !== "\\") {
        return `invalid escape at position ${i} in "${pattern}": a backslash may only escape "*" or "\\"`;
      }
      current += next;
      i++;
      continue;
    }
    current += char;
  }
  segments.push(current);
  return segments;
}

/** Compiles the pattern, calling `fail` (which throws) with the reason it is invalid. */
export function compileWildcard(pattern: string, fail: (reason: string) => never): StringTest {
  const segments = wildcardSegments(pattern);
  if (typeof segments === "string") return fail(segments);
  const first = segments[0] ?? "";
  if (segments.length === 1) return (value) => value === first;
  const last = segments[segments.length - 1] ?? "";
  const middle = segments.slice(1, -1).filter((segment) => segment !== "");
  const minLength = segments.reduce((sum, segment) => sum + segment.length, 0);
  // With the ends anchored, taking each middle segment at its leftmost fit is always optimal,
  // so this runs in linear passes with no backtracking, whatever the pattern.
  return (value) => {
    if (value.length < minLength || !value.startsWith(first) || !value.endsWith(last)) {
      return false;
    }
    let position = first.length;
    const end = value.length - last.length;
    for (const segment of middle) {
      const found = value.indexOf(segment, position);
      if (found < 0 || found + segment.length > end) return false;
      position = found + segment.length;
    }
    return true;
  };
}
