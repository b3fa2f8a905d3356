import type { Principal } from "../model/call";
import type { Logger } from "../observability/log";
import type { AuditedObject } from "./audit";
import type { Permission } from "./auth";

/** What middleware hands to route handlers through the context. */
export interface ApiEnv {
  Variables: {
    requestId: string;
    /** The stage's logger (JSON lines on stderr where none was given). */
    log: Logger;
    /** Set by the auth middleware on every /v1 route. */
    principal: Principal;
    /**
     * Whether the request's key is still valid, asked again by long-lived responses (event
     * streams), so a revoked key loses them too. Within the key cache's bound.
     */
    keyStillValid: () => Promise<boolean>;
    /** Set by `requirePermission`: what the matched route needs (admin writes are audited). */
    permission?: Permission;
    /**
     * What an admin write touched, set by its route in one line and recorded by the audit
     * middleware (a route that sets none is audited with the object its path names).
     */
    audited?: AuditedObject;
  };
}
