/** Cuts at a word boundary near `max` characters and marks the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  if (/\s/.test(text.charAt(max - 1))) return `${cut.trimEnd()}…`;
  const space = cut.lastIndexOf(" ");
  const base = space > max * 0.6 ? cut.slice(0, space) : cut;
  return `${base.replace(/[\s,.;:–—-]+$/, "")}…`;
}
