import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    // One DynamoDB Local for the whole run; each test file makes its own tables.
    globalSetup: ["test/setup/global.ts"],
    setupFiles: ["test/setup/fast-check.ts"],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
