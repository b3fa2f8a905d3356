/**
 * Builds the console into one script and one stylesheet, and writes them as a module of
 * strings the API imports on the console's first request (packages/http/src/console/assets.ts).
 * The module is committed so a fresh clone serves the console without a build step; a test runs
 * this build again and requires the same bytes, so the committed file is always what the source
 * gives. `npm run build:console` writes it.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const ASSETS_MODULE = fileURLToPath(
  new URL("../../http/src/console/assets.ts", import.meta.url),
);

async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [`${ROOT}src/${entry}`],
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    target: ["es2022", "chrome120", "firefox120", "safari16"],
    legalComments: "none",
    charset: "utf8",
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild gave nothing for ${entry}`);
  return output.text;
}

function named(body: string, extension: string): { name: string; body: string } {
  const digest = createHash("sha256").update(body).digest("hex").slice(0, 12);
  return { name: `app-${digest}.${extension}`, body };
}

/** The assets module's text, from the console's source as it is now. */
export async function buildConsoleAssets(): Promise<string> {
  const script = named(await bundle("main.ts"), "js");
  const styles = named(await bundle("styles.css"), "css");
  const version = (
    JSON.parse(readFileSync(`${ROOT}../../node_modules/esbuild/package.json`, "utf8")) as {
      version: string;
    }
  ).version;
  return `// Built from packages/console by \`npm run build:console\` (esbuild ${version}). Do not edit:
// a test builds it again from the source and requires the same bytes.

/** The console's script, named by a digest of its content. */
export const CONSOLE_SCRIPT = { name: ${JSON.stringify(script.name)}, body: ${JSON.stringify(script.body)} };

/** The console's stylesheet, named by a digest of its content. */
export const CONSOLE_STYLES = { name: ${JSON.stringify(styles.name)}, body: ${JSON.stringify(styles.body)} };
`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(ASSETS_MODULE, await buildConsoleAssets());
  console.log(`wrote ${ASSETS_MODULE}`);
}
