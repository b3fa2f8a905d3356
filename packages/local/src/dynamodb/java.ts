import { execFile } from "node:child_process";
import { JavaNotFoundError } from "./errors";

/** DynamoDB Local 3.x is built for Java 17. */
const MINIMUM_JAVA_VERSION = 17;

/** The java binary to run: an explicit option wins, then TOOLBUS_JAVA, then `java` on PATH. */
export function resolveJavaPath(javaPath?: string): string {
  return javaPath ?? process.env.TOOLBUS_JAVA ?? "java";
}

/**
 * Reads the major version from `java -version` output. Java 8 and older report "1.8.0_x",
 * later ones "17.0.15" or just "21".
 */
export function parseJavaMajorVersion(versionOutput: string): number | undefined {
  const match = /version "(\d+)(?:\.(\d+))?/.exec(versionOutput);
  if (!match) return undefined;
  const first = Number(match[1]);
  return first === 1 && match[2] !== undefined ? Number(match[2]) : first;
}

/**
 * Checks up front that `javaPath` runs and is recent enough. Without this, a missing java
 * would only show up as the supervisor shell exiting with 127, which says nothing useful.
 */
export async function assertJavaAvailable(javaPath: string): Promise<number> {
  const output = await new Promise<string>((resolve, reject) => {
    execFile(javaPath, ["-version"], { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(error);
      else resolve(`${stderr}${stdout}`);
    });
  }).catch((error: unknown) => {
    throw new JavaNotFoundError(`\`${javaPath} -version\` failed (${describe(error)})`, {
      cause: error,
      context: { javaPath },
    });
  });

  const major = parseJavaMajorVersion(output);
  if (major !== undefined && major < MINIMUM_JAVA_VERSION) {
    throw new JavaNotFoundError(`\`${javaPath}\` is Java ${major}`, {
      context: { javaPath, javaVersion: major },
    });
  }
  // An unparseable version (an unusual vendor banner) is let through: the JVM itself will
  // complain if it really cannot run the jar.
  return major ?? MINIMUM_JAVA_VERSION;
}

function describe(error: unknown): string {
  if (error && typeof error === "object" && "code" in error && error.code === "ENOENT") {
    return "not found";
  }
  return error instanceof Error ? error.message : String(error);
}
