#!/usr/bin/env node
// The CLI ships as TypeScript like every package here: tsx compiles it as it loads.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
