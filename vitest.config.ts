import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const client = (path: string) =>
  fileURLToPath(new URL(`packages/client/src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    // The client's exports name its build; tests run its source, never a build that may be
    // older (what its "@toolbus/source" export condition does for the type checker).
    alias: [
      { find: /^@toolbus\/client$/, replacement: client("index.ts") },
      { find: /^@toolbus\/client\/cli$/, replacement: client("cli/index.ts") },
      { find: /^@toolbus\/client\/(ai|openai|langchain)$/, replacement: client("adapters/$1.ts") },
    ],
  },
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    // One DynamoDB Local for the whole run; each test file makes its own tables.
    globalSetup: ["test/setup/global.ts"],
    setupFiles: ["test/setup/fast-check.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
