import * as z from "zod";
import { providerName } from "../model/ids";

// People's connected accounts at OAuth providers (`/v1/connections`). Views carry what a
// connection is, never a token: the tokens stay sealed in the stage's table.

/** A provider's name as a path names it (`/v1/connections/github`). */
export const connectionProviderName = providerName.meta({ example: "github" });

/** What `POST /v1/connections/{provider}` may take: the scopes to ask for (default: the provider's). */
export const connectBody = z
  .object({
    scopes: z
      .array(
        z
          .string()
          .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "one scope: no spaces or quotes")
          .max(200),
      )
      .max(50)
      .optional(),
  })
  .strict()
  .meta({ id: "ConnectRequest" });

/** A principal's id, as `?principal=` names whose connections an administrator reads. */
const principalIdParam = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7E]+$/, "printable ASCII without spaces")
  .meta({ description: "Whose connections (administrators only).", example: "0123456789abcdef" });

export const connectionsQuery = z.object({
  principal: principalIdParam.optional(),
  all: z.enum(["true", "false"]).optional().meta({
    description: "Every principal's connections (administrators only).",
  }),
});

export const disconnectQuery = z.object({ principal: principalIdParam.optional() });

export const connectionView = z
  .object({
    principalId: z.string(),
    provider: z.string(),
    status: z.enum(["connected", "expired"]),
    reason: z.string().optional().meta({ description: "Why it expired, for a person." }),
    scopes: z.array(z.string()),
    connectedAt: z.string(),
    refreshedAt: z.string().optional(),
    accessExpiresAt: z
      .string()
      .optional()
      .meta({ description: "When the current access token expires (it is refreshed before)." }),
  })
  .meta({ id: "Connection" });
export const connectionListView = z.object({ connections: z.array(connectionView) });

export const connectionProviderView = z
  .object({
    name: z.string(),
    scopes: z.array(z.string()).meta({ description: "The scopes asked for by default." }),
    connected: z.boolean().meta({ description: "Whether the caller has connected it." }),
    status: z.enum(["connected", "expired"]).optional(),
  })
  .meta({ id: "ConnectionProvider" });
export const connectionProvidersView = z.object({ providers: z.array(connectionProviderView) });

export const connectLinkView = z
  .object({
    url: z.string().meta({
      description:
        "Open it in your own browser to connect the account, until expiresAt: whoever opens it connects their account to you.",
    }),
    expiresAt: z.string(),
  })
  .meta({ id: "ConnectLink" });

export const disconnectedView = z
  .object({
    removed: z.boolean(),
    revoked: z.boolean().meta({
      description: "Whether the provider took the revocation (false where it has no endpoint).",
    }),
  })
  .meta({ id: "Disconnected" });
