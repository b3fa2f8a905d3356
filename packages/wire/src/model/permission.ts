/** What a request may need: read the catalog, call tools, administer, subscribe, approve. */
export const PERMISSIONS = ["read", "call", "admin", "subscribe", "approve"] as const;
export type Permission = (typeof PERMISSIONS)[number];
