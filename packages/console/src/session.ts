/**
 * The signed-in credential lives in this tab's session storage only: it is gone when the tab
 * closes, is never in a cookie (so no request is sent with it unless the console sends it), and
 * is not shared with other tabs. A tab the console opens (connecting an account) is opened with
 * `noopener`, so it starts with session storage of its own, not a copy of this tab's.
 */
const KEY = "toolbus.credential";

export function storedCredential(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function storeCredential(credential: string): void {
  sessionStorage.setItem(KEY, credential);
}

export function forgetCredential(): void {
  sessionStorage.removeItem(KEY);
}

/**
 * An OAuth sign-in under way (oauth.ts): the state the callback must bring back, the PKCE
 * verifier only this tab knows, and where to exchange the code. Kept in this tab's session
 * storage across the trip to the issuer and back, and taken (read and removed) by the callback,
 * so a code can be exchanged once at most.
 */
export interface PendingSignIn {
  state: string;
  verifier: string;
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  redirectUri: string;
  resource?: string;
  /** The issuer names itself in every answer (RFC 9207): one without `iss` is refused. */
  issRequired?: boolean;
  /** The console page (its hash) to go back to once signed in. */
  returnTo?: string;
}

const PENDING = "toolbus.oauth.pending";

export function storePendingSignIn(pending: PendingSignIn): void {
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
}

export function takePendingSignIn(): PendingSignIn | undefined {
  const text = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<PendingSignIn>;
    return typeof parsed.state === "string" && typeof parsed.verifier === "string"
      ? (parsed as PendingSignIn)
      : undefined;
  } catch {
    return undefined;
  }
}
