import type { meView } from "@toolbus/wire/schemas";
import type { z } from "zod";
import type { Api } from "./api";

/** Who is signed in and what their role may do (the API's `GET /v1/me`). */
export type Me = z.infer<typeof meView>;

/** What a role may do. */
export type Permission = Me["permissions"][number];

/** What a page gets to render itself. */
export interface ViewContext {
  api: Api;
  me: Me;
  /** The route's named parts (`/tools/:id` gives `id`), decoded. */
  params: Record<string, string>;
  /** The query after `?` in the hash (`#/catalog?q=files`). */
  query: URLSearchParams;
  /** Aborted when the person leaves the page: live streams and slow requests stop with it. */
  signal: AbortSignal;
  /** Whether the signed-in role grants the permission (the API checks again regardless). */
  can(permission: Permission): boolean;
  /** Goes to a console path such as `/tools/web_search` (the hash is added). */
  navigate(path: string): void;
  /** Renders the current page again, e.g. after a change it made. */
  refresh(): void;
}

/** A page: builds its content, fetching what it needs through `context.api`. */
export type View = (context: ViewContext) => Promise<Node> | Node;

/** A console link for a path, e.g. `link("/runs/r1")` is `#/runs/r1`. */
export function href(path: string, query?: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) if (value) search.set(name, value);
  const rest = search.toString();
  return `#${path}${rest ? `?${rest}` : ""}`;
}

/** One path segment, encoded for a console link. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
