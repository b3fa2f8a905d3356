import type { Permission } from "@toolbus/core/app/access";
import type { Logger } from "@toolbus/core/observability/log";
import type { ApiKeyRecord } from "@toolbus/core/ports";
import type { AuditObject } from "@toolbus/wire/model/audit";
import type { Principal } from "@toolbus/wire/model/call";

/**
 * What a route says it touched, in one line: `c.set("audited", { kind: "key", id, name, role })`.
 * Names and ids only, never a key, a secret or a body. `touched` may be long; the audit entry
 * keeps the first MAX_AUDIT_TOUCHED (model/audit.ts) and the count.
 */
export type AuditedObject = Omit<AuditObject, "touched" | "touchedCount"> & {
  touched?: readonly string[];
};

/**
 * What middleware hands to handlers through the context. One shape for the REST routes and
 * `/mcp`, which share an app, a key check and body limits.
 */
export interface HttpEnv {
  Variables: {
    requestId: string;
    /** The stage's logger (JSON lines on stderr where none was given). */
    log: Logger;
    /** Set by the auth middleware on every /v1 route and on /mcp. */
    principal: Principal;
    /**
     * Whether the request's key is still valid, asked again by long-lived responses (event
     * streams), so a revoked key loses them too. Within the key cache's bound.
     */
    keyStillValid: () => Promise<boolean>;
    /** The stored API key the request came with (never the key itself); unset for a token. */
    apiKey?: ApiKeyRecord;
    /**
     * The `WWW-Authenticate` a 401 or 403 from the key check or `requirePermission` answers
     * with (common/challenge.ts); a bare `Bearer` on a 401 when unset.
     */
    authChallenge?: string;
    /** Set by `requirePermission`: what the matched route needs (admin writes are audited). */
    permission?: Permission;
    /**
     * What an admin write touched, set by its route in one line and recorded by the audit
     * middleware (a route that sets none is audited with the object its path names).
     */
    audited?: AuditedObject;
  };
}
