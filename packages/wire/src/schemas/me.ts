import * as z from "zod";
import { PERMISSIONS } from "../model/permission";
import { apiKeyView } from "./keys";

/**
 * Who the caller is to this stage, and what it may do: what a console shows and offers. The
 * permissions come from the stage's access rules (core's access module), never from the client.
 */
export const meView = z
  .object({
    id: z.string(),
    role: z.string(),
    /** How the caller signed in: an API key, or an OAuth access token of the stage's issuer. */
    kind: z.enum(["key", "oauth"]),
    permissions: z.array(z.enum(PERMISSIONS)),
    /** The stage's roles, least privileged first: what a key or a policy may name. */
    roles: z.array(z.string()),
    /** Whether the stage offers connected accounts (`/v1/connections`). */
    connections: z.boolean(),
    /** The API key the caller signed in with: its record, never the key. */
    key: apiKeyView.optional(),
    /** A person signed in with OAuth: the token's issuer. */
    issuer: z.string().optional(),
    /** Where the stage serves its event streams, when that is not this API's own origin. */
    streamUrl: z.string().optional(),
  })
  .meta({ id: "Me" });
