import * as z from "zod";

/** Run and call ids come from callers and end up in keys and URLs: keep them boring. */
export const runId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "1-128 characters: letters, digits, . _ : -");
export const callId = runId;

/** Names of tools, toolsets and capabilities: snake_case, part of rule names (64 chars max on EventBridge). */
const snakeName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,47}$/, "snake_case: lowercase letters, digits and _, 1-48 chars");

/** Tool ids are global. `search` is not one: `GET /v1/tools/search` is the catalog's search. */
export const toolId = snakeName.refine((id) => id !== "search", "search is reserved");
export const toolsetName = snakeName;
export const capabilityName = snakeName;
