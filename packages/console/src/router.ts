import type { Permission, View } from "./view";

export interface Route {
  /** `/tools/:id`: literal segments and named ones. */
  path: string;
  view: View;
  /** Shown in the navigation under this name; pages reached from others have none. */
  nav?: string;
  /** The navigation offers it only to roles with this permission. */
  needs?: Permission;
}

export interface Match {
  route: Route;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** The route for a location hash (`#/tools/web_search?x=1`), or undefined. */
export function match(routes: readonly Route[], hash: string): Match | undefined {
  const raw = hash.replace(/^#/, "") || "/";
  const [pathPart = "/", queryPart = ""] = raw.split("?", 2);
  const parts = pathPart.split("/").filter(Boolean);
  for (const route of routes) {
    const pattern = route.path.split("/").filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (const [index, want] of pattern.entries()) {
      const have = parts[index] as string;
      if (want.startsWith(":")) {
        try {
          params[want.slice(1)] = decodeURIComponent(have);
        } catch {
          ok = false;
        }
      } else if (want !== have) ok = false;
      if (!ok) break;
    }
    if (ok) return { route, params, query: new URLSearchParams(queryPart) };
  }
  return undefined;
}
