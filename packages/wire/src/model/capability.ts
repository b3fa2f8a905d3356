import * as z from "zod";
import { capabilityName } from "./ids";

/** Whether this stage has something tools need, why not, and where that was read from. */
export const capabilityStatus = z.object({
  name: capabilityName,
  available: z.boolean(),
  reason: z.string().optional(),
  /** e.g. "env:GITHUB_TOKEN", "secret:GITHUB_TOKEN", "config". Never the value itself. */
  source: z.string().optional(),
  checkedAt: z.string(),
});
export type CapabilityStatus = z.infer<typeof capabilityStatus>;
