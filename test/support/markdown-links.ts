/*
 * Reading Markdown the way GitHub renders it, far enough to check a documentation set: its
 * headings and their anchors, its relative links, and the `npm run` scripts it names.
 *
 * Code (fenced blocks and inline code spans) is never read for links or headings: a `# comment`
 * in a shell block is not a heading, and `[a](b)` inside backticks is not a link.
 */

import { posix } from "node:path";

/** Lines of the source with fenced code blocks blanked out (line numbers kept). */
function proseLines(markdown: string): string[] {
  const lines = markdown.split("\n");
  let fence: string | undefined;
  return lines.map((line) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1]?.[0] === fence[0] && (open[1]?.length ?? 0) >= fence.length) {
        fence = undefined;
      }
      return "";
    }
    if (open) {
      fence = open[1];
      return "";
    }
    return line;
  });
}

/** The line without its inline code spans (each replaced by spaces of the same length). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[\s\S]*?\1/g, (span) => " ".repeat(span.length));
}

/**
 * GitHub's anchor for a heading's text: lowercase, every character that is not a letter, a
 * digit, a space, `-` or `_` removed, each space made a `-`. Inline formatting is removed
 * first: code spans keep their text, links keep their label, images and HTML tags go.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/**
 * Every anchor a page offers: its headings' slugs (a repeated slug gets `-1`, `-2`, … as
 * GitHub numbers them) and the `id` / `name` of its HTML anchors.
 */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1] ?? "");
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const html of line.matchAll(/<a\s+[^>]*(?:id|name)="([^"]+)"/gi)) {
      anchors.add(html[1] as string);
    }
  }
  return anchors;
}

export interface MarkdownLink {
  /** The link's target as written: `docs/api.md#routes`, `#errors`, `https://…`. */
  target: string;
  /** Its line, counting from 1. */
  line: number;
}

/** Inline links and images, `[text](target "title")`, and reference definitions, `[x]: target`. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(markdown).forEach((raw, index) => {
    const line = withoutCodeSpans(raw);
    for (const match of line.matchAll(/\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)/g)) {
      const target = (match[1] ?? "").replace(/^<|>$/g, "");
      links.push({ target, line: index + 1 });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(\S+)/.exec(line);
    if (definition) links.push({ target: definition[1] as string, line: index + 1 });
  });
  return links;
}

/** A link that leaves the repository (a scheme such as `https:` or `mailto:`, or `//host`). */
const isExternal = (target: string) =>
  /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");

export interface LinkProblem {
  file: string;
  line: number;
  target: string;
  problem: string;
}

/**
 * What is wrong with the relative links of `file` (a path from the repository's root):
 * a target that does not exist, or a `#fragment` that no heading of the target makes.
 * `read(path)` returns a file's text, `""` for a directory, or undefined when nothing is there.
 */
export function checkLinks(
  file: string,
  markdown: string,
  read: (path: string) => string | undefined,
): LinkProblem[] {
  const problems: LinkProblem[] = [];
  for (const { target, line } of linksOf(markdown)) {
    if (target === "" || isExternal(target)) continue;
    const hash = target.indexOf("#");
    const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
    const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const path =
      pathPart === "" ? file : posix.normalize(posix.join(posix.dirname(file), pathPart));
    const report = (problem: string) => problems.push({ file, line, target, problem });
    if (path.startsWith("../") || path.startsWith("/")) {
      report("leads out of the repository");
      continue;
    }
    const text = pathPart === "" ? markdown : read(path.replace(/\/$/, ""));
    if (text === undefined) {
      report(`${path} does not exist`);
      continue;
    }
    if (fragment === undefined || !path.endsWith(".md")) continue;
    if (!anchorsOf(text).has(fragment))
      report(`${path} has no heading with the anchor #${fragment}`);
  }
  return problems;
}

export interface NpmRun {
  script: string;
  /** The workspace named with `-w` / `--workspace`, when one is. */
  workspace?: string;
  line: number;
}

/** Every `npm run <script>` the page names, in prose and in code alike. */
export function npmRunsOf(markdown: string): NpmRun[] {
  const runs: NpmRun[] = [];
  markdown.split("\n").forEach((line, index) => {
    for (const match of line.matchAll(
      /\bnpm run((?:\s+(?:-w|--workspace)(?:=|\s+)\S+)*)\s+([\w:.-]+)((?:\s+(?:-w|--workspace)(?:=|\s+)[^\s`]+)*)/g,
    )) {
      const flags = `${match[1] ?? ""} ${match[3] ?? ""}`;
      const workspace = /(?:-w|--workspace)(?:=|\s+)([^\s`]+)/.exec(flags)?.[1];
      runs.push({
        script: match[2] as string,
        line: index + 1,
        ...(workspace ? { workspace } : {}),
      });
    }
  });
  return runs;
}

/** Whether each command appears, in order, within the first `lines` lines. */
export function startsWithCommands(
  markdown: string,
  commands: readonly string[],
  lines: number,
): boolean {
  const head = markdown.split("\n").slice(0, lines).join("\n");
  let from = 0;
  for (const command of commands) {
    const at = head.indexOf(command, from);
    if (at < 0) return false;
    from = at + command.length;
  }
  return true;
}
