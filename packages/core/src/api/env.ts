import type { Principal } from "../model/call";

/** What middleware hands to route handlers through the context. */
export interface ApiEnv {
  Variables: {
    requestId: string;
    /** Set by the auth middleware on every /v1 route. */
    principal: Principal;
  };
}
