/**
 * A tiny browser over Node's fetch, for tests that send a person through sign-in pages: it
 * follows redirects itself (`redirect: "manual"`), keeps cookies per origin (Path, Max-Age and
 * Expires honoured; HttpOnly, Secure and SameSite ignored, as every site here is loopback), and
 * fills oidc-provider's development sign-in and consent forms. Each instance is one person.
 */

/** Where the browser is after a navigation. */
export interface Page {
  /** The page's URL; when `stopped`, the URL the browser was sent to and did not open. */
  url: string;
  /** The page's status; when `stopped`, the status of the redirect that pointed at `url`. */
  status: number;
  headers: Headers;
  /** The page's text ("" when `stopped`). */
  body: string;
  /** True when a redirect reached a URL `stopAt` matched, which was left unopened. */
  stopped: boolean;
}

export interface NavigateOptions {
  /** A redirect to a URL this matches is not followed: the navigation ends there. */
  stopAt?: (url: URL) => boolean;
  /** At most this many requests (default 20). */
  maxSteps?: number;
}

interface Cookie {
  value: string;
  path: string;
  /** Milliseconds since the epoch; absent for a session cookie. */
  expires?: number;
}

export class Browser {
  /** origin → cookie name + "\n" + path → cookie. */
  readonly #jar = new Map<string, Map<string, Cookie & { name: string }>>();

  /**
   * One request with this browser's cookies, redirects not followed; the cookies it sets kept.
   * `form` is sent as application/x-www-form-urlencoded, with POST unless `method` says otherwise.
   */
  async request(
    url: string | URL,
    init: {
      method?: string;
      form?: URLSearchParams | Record<string, string>;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Response> {
    const target = new URL(url);
    const headers = new Headers(init.headers);
    const cookie = this.cookieHeader(target);
    if (cookie) headers.set("cookie", cookie);
    let body: URLSearchParams | undefined;
    if (init.form) {
      body = init.form instanceof URLSearchParams ? init.form : new URLSearchParams(init.form);
      headers.set("content-type", "application/x-www-form-urlencoded");
    }
    const response = await fetch(target, {
      method: init.method ?? (body ? "POST" : "GET"),
      redirect: "manual",
      headers,
      ...(body ? { body } : {}),
    });
    for (const line of response.headers.getSetCookie()) this.#store(target, line);
    return response;
  }

  /** Opens `url` and follows its redirects until a page, or a URL `stopAt` matches. */
  open(url: string | URL, options: NavigateOptions = {}): Promise<Page> {
    return this.#navigate({ url: new URL(url).href }, options);
  }

  /** Submits a form as the page's own button would (POST, urlencoded), following redirects. */
  submit(
    action: string | URL,
    fields: URLSearchParams | Record<string, string>,
    options: NavigateOptions = {},
  ): Promise<Page> {
    const form = fields instanceof URLSearchParams ? fields : new URLSearchParams(fields);
    return this.#navigate({ url: new URL(action).href, form }, options);
  }

  /**
   * On an oidc-provider development sign-in or consent page (`features.devInteractions`):
   * signs in as `login` (the account id; any password) and consents, page after page, until
   * a page that is neither, or a URL `stopAt` matches. A page that is neither is returned as is
   * (a person already signed in, who consented before, is sent straight back).
   */
  async signInAndConsent(page: Page, login: string, options: NavigateOptions = {}): Promise<Page> {
    let current = page;
    for (let step = 0; step < 10; step++) {
      if (current.stopped) return current;
      const form = devInteractionForm(current);
      if (!form) return current;
      const fields: Record<string, string> =
        form.prompt === "login"
          ? { prompt: "login", login, password: "any" }
          : { prompt: form.prompt };
      current = await this.submit(form.action, fields, options);
    }
    throw new Error("the sign-in did not end in 10 forms");
  }

  /** `open(url)`, then `signInAndConsent` as `login`. */
  async authorize(url: string | URL, login: string, options: NavigateOptions = {}): Promise<Page> {
    return this.signInAndConsent(await this.open(url, options), login, options);
  }

  /** The value of the cookie `name` this browser would send to `url`, if any. */
  cookie(url: string | URL, name: string): string | undefined {
    const target = new URL(url);
    return this.#cookiesFor(target).find((cookie) => cookie.name === name)?.value;
  }

  /** The Cookie header this browser sends to `url` ("" when none). */
  cookieHeader(url: string | URL): string {
    return this.#cookiesFor(new URL(url))
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join("; ");
  }

  async #navigate(
    start: { url: string; form?: URLSearchParams },
    options: NavigateOptions,
  ): Promise<Page> {
    let next = start;
    const maxSteps = options.maxSteps ?? 20;
    for (let step = 0; step < maxSteps; step++) {
      const response = await this.request(next.url, next.form ? { form: next.form } : {});
      const location = response.headers.get("location");
      if (location && response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const target = new URL(location, next.url);
        if (options.stopAt?.(target)) {
          return {
            url: target.href,
            status: response.status,
            headers: response.headers,
            body: "",
            stopped: true,
          };
        }
        next = { url: target.href };
        continue;
      }
      return {
        url: next.url,
        status: response.status,
        headers: response.headers,
        body: await response.text(),
        stopped: false,
      };
    }
    throw new Error(`the navigation from ${start.url} did not end in ${maxSteps} requests`);
  }

  #cookiesFor(target: URL): (Cookie & { name: string })[] {
    const cookies = this.#jar.get(target.origin);
    if (!cookies) return [];
    const now = Date.now();
    const matching: (Cookie & { name: string })[] = [];
    for (const [key, cookie] of cookies) {
      if (cookie.expires !== undefined && cookie.expires <= now) {
        cookies.delete(key);
        continue;
      }
      if (pathMatches(target.pathname, cookie.path)) matching.push(cookie);
    }
    // Longer paths first, as browsers send them.
    return matching.sort((a, b) => b.path.length - a.path.length);
  }

  #store(target: URL, line: string) {
    const [pair = "", ...attributes] = line.split(";");
    const at = pair.indexOf("=");
    if (at < 0) return;
    const name = pair.slice(0, at).trim();
    const value = pair.slice(at + 1).trim();
    let path: string | undefined;
    let expires: number | undefined;
    let maxAge: number | undefined;
    for (const attribute of attributes) {
      const equals = attribute.indexOf("=");
      const key = (equals < 0 ? attribute : attribute.slice(0, equals)).trim().toLowerCase();
      const argument = equals < 0 ? "" : attribute.slice(equals + 1).trim();
      if (key === "path" && argument.startsWith("/")) path = argument;
      else if (key === "max-age" && /^-?\d+$/.test(argument)) maxAge = Number(argument);
      else if (key === "expires") {
        const when = Date.parse(argument);
        if (!Number.isNaN(when)) expires = when;
      }
    }
    // Max-Age wins over Expires (RFC 6265 §5.3).
    if (maxAge !== undefined) expires = Date.now() + maxAge * 1000;
    const cookie = { name, value, path: path ?? defaultPath(target.pathname), expires };
    let cookies = this.#jar.get(target.origin);
    if (!cookies) {
      cookies = new Map();
      this.#jar.set(target.origin, cookies);
    }
    const key = `${name}\n${cookie.path}`;
    if (expires !== undefined && expires <= Date.now()) cookies.delete(key);
    else cookies.set(key, cookie);
  }
}

/** The form of an oidc-provider development interaction page: its prompt and where it posts. */
export function devInteractionForm(page: Page): { prompt: string; action: string } | undefined {
  if (page.stopped || page.status !== 200) return undefined;
  const prompt = /name="prompt" value="(\w+)"/.exec(page.body)?.[1];
  const action = /<form[^>]*action="([^"]+)"/.exec(page.body)?.[1];
  if (!prompt || !action) return undefined;
  return { prompt, action: new URL(unescapeHtml(action), page.url).href };
}

function unescapeHtml(text: string): string {
  return text
    .replaceAll("&#x2F;", "/")
    .replaceAll("&#47;", "/")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

/** RFC 6265 §5.1.4: a request path matches a cookie path equal to it or a directory of it. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

/** RFC 6265 §5.1.4: the directory of the request's path. */
function defaultPath(requestPath: string): string {
  if (!requestPath.startsWith("/")) return "/";
  const last = requestPath.lastIndexOf("/");
  return last <= 0 ? "/" : requestPath.slice(0, last);
}
