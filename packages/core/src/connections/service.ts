import { createHash, timingSafeEqual } from "node:crypto";
import type { Failure, Principal } from "@toolbus/wire/model/call";
import { Failures } from "@toolbus/wire/model/failure";
import type { Logger } from "../observability/log";
import type { HttpClient, SecretSource } from "../outbound/types";
import {
  connectionKey,
  type DynamoConnectionStore,
  type StoredConnection,
} from "../store/dynamodb/connections";
import {
  type ConnectionsConfig,
  callbackUrl,
  connectUrl,
  type Provider,
  providerOf,
} from "./config";
import { type DataKeys, KeyUnavailableError, seal, unseal } from "./envelope";
import { authorizationUrl, OAuthClient, randomToken, TokenError, type TokenSet } from "./oauth";

/** A connection as people and admins see it: never a token. */
export interface ConnectionView {
  principalId: string;
  provider: string;
  status: "connected" | "expired";
  reason?: string;
  scopes: string[];
  connectedAt: string;
  refreshedAt?: string;
  /** When the current access token expires (it is refreshed before). */
  accessExpiresAt?: string;
}

/** What a tool's call gets: the caller's access token, or the failure to answer with. */
export type TokenAnswer = { ok: true; token: string } | { ok: false; failure: Failure };

/** What a tool's run asks of connected accounts: the caller's token at a provider. */
export interface ConnectionTokens {
  accessToken(
    principal: Principal,
    provider: string,
    scopes: readonly string[],
  ): Promise<TokenAnswer>;
}

/** A connect attempt refused: shown to the person on the page, with a 400. */
export class ConnectRefused extends Error {
  override name = "ConnectRefused";
}

export interface ConnectionDeps {
  config: ConnectionsConfig;
  store: DynamoConnectionStore;
  keys: DataKeys;
  /** The guarded outbound client: providers are reached like any upstream. */
  http: HttpClient;
  /** Where providers' client secrets are read, by name. */
  secret: SecretSource;
  now?: () => number;
  log?: Logger;
}

/** Refreshed this long before the access token expires, so a call never starts with a dying token. */
const REFRESH_AHEAD_MS = 60_000;
/** How long one refresh may hold the connection; others wait for its tokens meanwhile. */
const LEASE_MS = 15_000;
/** A pending connection (state) lives as long as a person may take at the provider's pages. */
const PENDING_MS = 10 * 60_000;
/** A connect link handed out works this long. */
const TICKET_MS = 15 * 60_000;
/**
 * A failed call's connect link is handed out again while it has this long left to live: an
 * agent retrying a tool its person has not connected yet gets one link (one ticket written),
 * not one per attempt, and a person always has at least this long to follow it.
 */
const REUSED_LINK_LEFT_MS = 10 * 60_000;
/** Failure links a process keeps for reuse, at most (the oldest goes first). */
const KEPT_LINKS = 1_000;

interface Sealed {
  accessToken: string;
  refreshToken?: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * People's connected accounts: connecting (authorization code + PKCE, a single-use state bound
 * to the browser that started it), the sealed tokens, refresh ahead of expiry by one holder at
 * a time, and disconnecting. The one owner of when a connection is usable.
 */
export class ConnectionService implements ConnectionTokens {
  readonly #deps: ConnectionDeps;
  readonly #now: () => number;
  /** Links handed out with `connection_required`, by principal, provider and scopes. */
  readonly #failureLinks = new Map<
    string,
    { link: Promise<{ url: string; expiresAt: string }>; expiresAt: number }
  >();

  constructor(deps: ConnectionDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** The providers people can connect, with the scopes asked by default. */
  async providers(): Promise<{ name: string; scopes: string[] }[]> {
    return Object.keys(this.#deps.config.providers)
      .map((name) => providerOf(this.#deps.config, name))
      .filter((provider): provider is Provider => provider !== undefined)
      .map(({ name, scopes }) => ({ name, scopes }));
  }

  /**
   * The caller's access token at `provider`, refreshed first when it is about to expire; a
   * `connection_required` failure (with a connect link for this caller) when there is none
   * that works, an `upstream_error` when the provider could not be reached to refresh it.
   */
  async accessToken(
    principal: Principal,
    providerName: string,
    scopes: readonly string[],
  ): Promise<TokenAnswer> {
    const provider = this.#provider(providerName);
    if (!provider) {
      return {
        ok: false,
        failure: Failures.unavailable(
          `This stage has no ${providerName} provider configured for connected accounts.`,
        ),
      };
    }
    const wanted = scopes.length > 0 ? [...scopes] : provider.scopes;
    let stored = await this.#deps.store.get(principal.id, provider.name);
    for (let attempt = 0; attempt < 20; attempt += 1) {
      if (!stored) return this.#needed(principal, provider, wanted, "not_connected");
      if (stored.status === "expired") {
        return this.#needed(principal, provider, wanted, "expired", stored.reason);
      }
      const missing =
        stored.scopes.length > 0 ? wanted.filter((s) => !stored?.scopes.includes(s)) : [];
      if (missing.length > 0) {
        return this.#needed(
          principal,
          provider,
          wanted,
          "not_connected",
          `the connection does not grant ${missing.join(", ")}`,
        );
      }
      let tokens: Sealed;
      try {
        tokens = await this.#open(stored);
      } catch (error) {
        if (!(error instanceof KeyUnavailableError)) throw error;
        await this.#deps.store.expire(principal.id, provider.name, stored.version, error.message);
        return this.#needed(principal, provider, wanted, "expired", error.message);
      }
      const now = this.#now();
      const expiresAt = stored.accessExpiresAt;
      if (expiresAt === undefined || expiresAt - now > REFRESH_AHEAD_MS) {
        return { ok: true, token: tokens.accessToken };
      }
      if (!tokens.refreshToken) {
        if (expiresAt > now) return { ok: true, token: tokens.accessToken };
        const reason = `The ${provider.name} access token expired and the provider gave no refresh token.`;
        await this.#deps.store.expire(principal.id, provider.name, stored.version, reason);
        return this.#needed(principal, provider, wanted, "expired", reason);
      }
      // One refresh at a time: whoever takes the lease rotates; the others wait for its tokens.
      const leased = await this.#deps.store.lease(
        principal.id,
        provider.name,
        stored.version,
        now,
        now + LEASE_MS,
      );
      if (!leased) {
        if (expiresAt > now && stored.refreshingUntil && stored.refreshingUntil > now) {
          // The token still works: use it rather than wait for the other refresh.
          return { ok: true, token: tokens.accessToken };
        }
        await sleep(250);
        stored = await this.#deps.store.get(principal.id, provider.name);
        continue;
      }
      const refreshed = await this.#refresh(principal, provider, stored, tokens, wanted);
      if (refreshed !== "moved") return refreshed;
      stored = await this.#deps.store.get(principal.id, provider.name);
    }
    return {
      ok: false,
      failure: Failures.upstreamError(
        `The ${provider.name} connection is being refreshed; try again.`,
      ),
    };
  }

  async #refresh(
    principal: Principal,
    provider: Provider,
    stored: StoredConnection,
    tokens: Sealed,
    wanted: string[],
  ): Promise<TokenAnswer | "moved"> {
    let granted: TokenSet;
    try {
      granted = await this.#client(provider).refresh(tokens.refreshToken ?? "");
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      if (error.reason === "unreachable") {
        // The lease lapses by itself; the connection stays as it was.
        return { ok: false, failure: Failures.upstreamError(`${error.message} Try again.`) };
      }
      if (error.reason === "refused") {
        return { ok: false, failure: Failures.unavailable(error.message) };
      }
      const expired = await this.#deps.store.expire(
        principal.id,
        provider.name,
        stored.version,
        `${provider.name} refused to refresh the connection (invalid_grant): connect again.`,
      );
      // It moved on: someone connected again meanwhile. Read theirs.
      if (!expired) return "moved";
      return this.#needed(
        principal,
        provider,
        wanted,
        "expired",
        "the provider refused to refresh it",
      );
    }
    const next: Sealed = {
      accessToken: granted.accessToken,
      // Providers that do not rotate keep the refresh token valid: keep it.
      ...(granted.refreshToken || tokens.refreshToken
        ? { refreshToken: granted.refreshToken ?? tokens.refreshToken }
        : {}),
    };
    const written = await this.#deps.store.rotate(principal.id, provider.name, stored.version, {
      sealed: await this.#seal(principal.id, provider.name, next),
      ...(granted.expiresAt === undefined ? {} : { accessExpiresAt: granted.expiresAt }),
      scopes: granted.scopes ?? stored.scopes,
      refreshedAt: new Date(this.#now()).toISOString(),
    });
    return written ? { ok: true, token: next.accessToken } : "moved";
  }

  /**
   * A link for a browser that starts connecting `provider` for `principal`: it holds a ticket
   * (its hash stored, for 15 minutes), never a token.
   */
  async link(
    principal: Principal,
    providerName: string,
    scopes?: readonly string[],
  ): Promise<{ url: string; expiresAt: string }> {
    const provider = this.#required(providerName);
    const ticket = randomToken();
    const expiresAt = this.#now() + TICKET_MS;
    await this.#deps.store.putTicket(sha256(ticket), {
      provider: provider.name,
      principal,
      scopes: scopes?.length ? [...scopes] : provider.scopes,
      expiresAt,
    });
    return {
      url: connectUrl(this.#deps.config, provider.name, ticket),
      expiresAt: new Date(expiresAt).toISOString(),
    };
  }

  /**
   * Starts a connection: a single-use state bound to `principal` and to a secret the starting
   * browser keeps (`binding`, its cookie), and where to send that browser.
   */
  async begin(
    providerName: string,
    who: { ticket: string } | { principal: Principal; scopes?: readonly string[] },
  ): Promise<{ location: string; binding: string }> {
    const provider = this.#required(providerName);
    let principal: Principal;
    let scopes: string[];
    if ("ticket" in who) {
      const ticket = await this.#deps.store.getTicket(sha256(who.ticket), this.#now());
      if (!ticket || ticket.provider !== provider.name) {
        throw new ConnectRefused(
          "This connect link has expired or is not for this provider. Ask for a new one.",
        );
      }
      principal = ticket.principal;
      scopes = ticket.scopes;
    } else {
      principal = who.principal;
      scopes = who.scopes?.length ? [...who.scopes] : provider.scopes;
    }
    const state = randomToken();
    const verifier = randomToken(48);
    const binding = randomToken();
    await this.#deps.store.putPending(sha256(state), {
      provider: provider.name,
      principal,
      verifier,
      binding: sha256(binding),
      scopes,
      expiresAt: this.#now() + PENDING_MS,
    });
    return {
      location: authorizationUrl(provider, {
        redirectUri: callbackUrl(this.#deps.config, provider.name),
        state,
        verifier,
        scopes,
      }),
      binding,
    };
  }

  /**
   * Finishes a connection where the provider sent the browser back: the state is taken (it
   * works once), the browser must be the one that started it, `iss` must be the provider's
   * where it is known, and the code is exchanged with the PKCE verifier.
   */
  async finish(
    providerName: string,
    response: { state?: string; code?: string; error?: string; iss?: string },
    binding: string | undefined,
  ): Promise<ConnectionView> {
    const provider = this.#required(providerName);
    if (!response.state) throw new ConnectRefused("The provider sent no state back.");
    const pending = await this.#deps.store.takePending(sha256(response.state), this.#now());
    if (!pending || pending.provider !== provider.name) {
      throw new ConnectRefused(
        "This connection attempt has expired or was already used. Start again.",
      );
    }
    if (!binding || !sameHash(sha256(binding), pending.binding)) {
      throw new ConnectRefused(
        "This connection was started in another browser or by another person: open the connect link again in this browser.",
      );
    }
    if (
      response.iss !== undefined &&
      provider.issuer !== undefined &&
      response.iss !== provider.issuer
    ) {
      throw new ConnectRefused(`The answer came from ${response.iss}, not from ${provider.name}.`);
    }
    if (response.error) {
      throw new ConnectRefused(`${provider.name} did not grant access (${response.error}).`);
    }
    if (!response.code) throw new ConnectRefused(`${provider.name} sent no authorization code.`);
    let granted: TokenSet;
    try {
      granted = await this.#client(provider).exchangeCode(
        response.code,
        pending.verifier,
        callbackUrl(this.#deps.config, provider.name),
      );
    } catch (error) {
      if (error instanceof TokenError) throw new ConnectRefused(error.message);
      throw error;
    }
    const principalId = pending.principal.id;
    const stored = await this.#deps.store.put({
      principalId,
      provider: provider.name,
      status: "connected",
      scopes: granted.scopes ?? pending.scopes,
      connectedAt: new Date(this.#now()).toISOString(),
      ...(granted.expiresAt === undefined ? {} : { accessExpiresAt: granted.expiresAt }),
      sealed: await this.#seal(principalId, provider.name, {
        accessToken: granted.accessToken,
        ...(granted.refreshToken ? { refreshToken: granted.refreshToken } : {}),
      }),
    });
    return viewOf(stored);
  }

  async list(principalId: string): Promise<ConnectionView[]> {
    return (await this.#deps.store.list(principalId)).map(viewOf);
  }

  async listAll(): Promise<ConnectionView[]> {
    return (await this.#deps.store.listAll()).map(viewOf);
  }

  /**
   * Forgets a connection and revokes its tokens at the provider where it can (RFC 7009): the
   * refresh token, which takes the access tokens with it at most providers, else the access token.
   */
  async disconnect(
    principalId: string,
    providerName: string,
  ): Promise<{ removed: boolean; revoked: boolean }> {
    const removed = await this.#deps.store.remove(principalId, providerName);
    if (!removed) return { removed: false, revoked: false };
    const provider = this.#provider(providerName);
    if (!provider?.revokeUrl) return { removed: true, revoked: false };
    let tokens: Sealed;
    try {
      tokens = await this.#open(removed);
    } catch {
      return { removed: true, revoked: false };
    }
    const client = this.#client(provider);
    const revoked = tokens.refreshToken
      ? await client.revoke(tokens.refreshToken, "refresh_token")
      : await client.revoke(tokens.accessToken, "access_token");
    return { removed: true, revoked };
  }

  /** A `connection_required` failure with a fresh connect link for this caller. */
  async #needed(
    principal: Principal,
    provider: Provider,
    scopes: string[],
    reason: "not_connected" | "expired",
    why?: string,
  ): Promise<TokenAnswer> {
    const link = await this.#failureLink(principal, provider, scopes);
    const message =
      reason === "expired"
        ? `Your ${provider.name} connection has expired${why ? ` (${why.replace(/\.$/, "")})` : ""}. Reconnect at ${link.url}, then call again.`
        : `This tool acts as you on ${provider.name}, and you have not connected ${provider.name}${why ? ` (${why})` : ""}. Connect at ${link.url}, then call again.`;
    return {
      ok: false,
      failure: Failures.connectionRequired(message, {
        provider: provider.name,
        scopes,
        reason,
        connectUrl: link.url,
      }),
    };
  }

  /**
   * A connect link for a failed call: the one handed out for the same need while it has
   * REUSED_LINK_LEFT_MS left (failures at the same moment share the one being made), or a new
   * one. A link that could not be made is not kept.
   */
  #failureLink(principal: Principal, provider: Provider, scopes: string[]) {
    const key = JSON.stringify([principal, provider.name, scopes]);
    const kept = this.#failureLinks.get(key);
    if (kept && kept.expiresAt - this.#now() >= REUSED_LINK_LEFT_MS) return kept.link;
    const link = this.link(principal, provider.name, scopes);
    this.#failureLinks.delete(key);
    // Until it is made, it counts as good for the whole life of a ticket.
    this.#failureLinks.set(key, { link, expiresAt: this.#now() + TICKET_MS });
    link.then(
      (made) => {
        const entry = this.#failureLinks.get(key);
        if (entry?.link === link) entry.expiresAt = Date.parse(made.expiresAt);
      },
      () => {
        if (this.#failureLinks.get(key)?.link === link) this.#failureLinks.delete(key);
      },
    );
    if (this.#failureLinks.size > KEPT_LINKS) {
      const oldest = this.#failureLinks.keys().next();
      if (!oldest.done) this.#failureLinks.delete(oldest.value);
    }
    return link;
  }

  #provider(name: string): Provider | undefined {
    return providerOf(this.#deps.config, name);
  }

  #required(name: string): Provider {
    const provider = this.#provider(name);
    if (!provider) throw new ConnectRefused(`This stage has no provider named ${name}.`);
    return provider;
  }

  #client(provider: Provider): OAuthClient {
    return new OAuthClient(provider, this.#deps.http, this.#deps.secret);
  }

  async #seal(principalId: string, provider: string, tokens: Sealed): Promise<Uint8Array> {
    return seal(this.#deps.keys, JSON.stringify(tokens), connectionKey(principalId, provider));
  }

  async #open(stored: StoredConnection): Promise<Sealed> {
    const text = await unseal(
      this.#deps.keys,
      stored.sealed,
      connectionKey(stored.principalId, stored.provider),
    ).catch((error: unknown) => {
      if (error instanceof KeyUnavailableError) throw error;
      throw new KeyUnavailableError("The stored tokens cannot be opened with the stage's key.");
    });
    return JSON.parse(text) as Sealed;
  }
}

function viewOf(stored: StoredConnection): ConnectionView {
  return {
    principalId: stored.principalId,
    provider: stored.provider,
    status: stored.status,
    ...(stored.reason ? { reason: stored.reason } : {}),
    scopes: stored.scopes,
    connectedAt: stored.connectedAt,
    ...(stored.refreshedAt ? { refreshedAt: stored.refreshedAt } : {}),
    ...(stored.accessExpiresAt === undefined
      ? {}
      : { accessExpiresAt: new Date(stored.accessExpiresAt).toISOString() }),
  };
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
