/**
 * The signed-in credential lives in this tab's session storage only: it is gone when the tab
 * closes, is never in a cookie (so no request is sent with it unless the console sends it), and
 * is not shared with other tabs.
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
