import { describe, expect, it } from "vitest";
import {
  GENERATED,
  generateCatalogTypes,
  readGenerated,
} from "../packages/client/scripts/generate-types";

describe("the client's generated catalog types", () => {
  it("match the zod schemas and interfaces of core and tools they are written from", async () => {
    // Stale when a schema changed and `npm run generate -w @toolbus/client` was not run.
    expect(await readGenerated(), GENERATED).toBe(generateCatalogTypes());
  }, 60_000);
});
