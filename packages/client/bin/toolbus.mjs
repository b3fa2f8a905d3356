#!/usr/bin/env node
import { existsSync } from "node:fs";

// An installed package has only dist/, which plain node runs. In a checkout of the repository
// the source is beside this file: it runs through tsx (a dev dependency there), so the command
// is never older than the code and needs no build.
const source = new URL("../src/cli/main.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import("../dist/cli/main.js");
}
