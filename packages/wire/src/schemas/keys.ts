import * as z from "zod";
import { label } from "../model/text";

/** An API key's public record: never the key, which only its hash stands for. */
export const apiKeyView = z
  .object({
    keyId: z.string(),
    name: z.string(),
    role: z.string(),
    createdAt: z.string(),
    revokedAt: z.string().optional(),
    lastUsedAt: z.string().optional(),
    actsFor: z.boolean().optional(),
  })
  .meta({ id: "ApiKey" });
export const apiKeyListView = z.object({ keys: z.array(apiKeyView) });

export const apiKeyBody = z
  .object({
    name: label(120),
    role: z.string().min(1).max(64),
    actsFor: z.boolean().optional().meta({
      description:
        "The key may name an end user in X-Toolbus-On-Behalf-Of and act as them (a trusted agent backend's key).",
    }),
  })
  .strict()
  .meta({ id: "ApiKeyInput" });

export const apiKeyCreatedView = z
  .object({
    key: z.string().meta({ description: "Shown once; only its hash is stored." }),
    keyId: z.string(),
    name: z.string(),
    role: z.string(),
    createdAt: z.string(),
    actsFor: z.boolean().optional(),
  })
  .meta({ id: "ApiKeyCreated" });
