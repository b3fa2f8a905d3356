import * as z from "zod";
import { capabilityName, toolId } from "./ids";

export const cachePolicy = z.object({
  ttlSeconds: z.number().int().positive(),
  /** Input fields that form the cache key; absent = the whole input. */
  keyFields: z.array(z.string()).optional(),
  /** How long past expiry a stale result may be served when the upstream fails. */
  staleIfErrorSeconds: z.number().int().nonnegative().default(0),
});

const limit = z.object({
  limit: z.number().int().positive(),
  windowSeconds: z.number().int().positive(),
});

export const rateLimit = z.object({
  /** Calls allowed per window across all callers (the upstream's quota). */
  perTool: limit.optional(),
  /** Calls allowed per window for one principal. */
  perPrincipal: limit.optional(),
});

/**
 * The fields of a tool's spec that running it reads: which capabilities gate it, its cache,
 * rate limits, timeout, fallback and version. The catalog's `toolSpec` is built from these
 * same fields, so a default is decided once; a tool's function parses only these, never its
 * whole catalog entry (that would convert its zod schemas to JSON Schema on every cold start).
 */
export const toolPolicyFields = {
  id: toolId,
  requires: z.array(capabilityName).default([]),
  cache: cachePolicy.optional(),
  rateLimit: rateLimit.optional(),
  timeoutMs: z.number().int().min(100).max(900_000).default(10_000),
  /** Names the fallback tool used when this one is unavailable. */
  fallback: toolId.optional(),
  version: z.string().min(1).default("1"),
  /** What one call costs against a run's `maxCost` budget, in the stage's units. */
  cost: z.number().int().min(0).max(1_000_000).default(1),
};

export const toolPolicy = z.object(toolPolicyFields);
export type ToolPolicy = z.infer<typeof toolPolicy>;
