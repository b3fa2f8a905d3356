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
    // SST v2 loads the AWS SDK v2, which announces its end of support on every load; the
    // stacks never call AWS with it (synthesis runs offline), so the notice says nothing here.
    env: { AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE: "1" },
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
