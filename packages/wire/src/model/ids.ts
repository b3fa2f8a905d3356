import * as z from "zod";

/** Run and call ids come from callers and end up in keys and URLs: keep them boring. */
export const runId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, "1-128 characters: letters, digits, . _ : -");
export const callId = runId;

/** Tool ids are global, snake_case, and part of rule names (64 chars max on EventBridge). */
export const toolId = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,47}$/, "snake_case: lowercase letters, digits and _, 1-48 chars");
export const toolsetName = toolId;

/** An OAuth provider's name (connected accounts): in URLs (`/connect/github`) and item keys. */
export const PROVIDER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
export const providerName = z
  .string()
  .regex(PROVIDER_NAME, "a provider name: a-z, 0-9, _ and -, starting with a letter");
export const capabilityName = toolId;
