import { isRegisteredSecret } from "@toolbus/wire/model/registered-secret";
import type { SecretSource } from "./outbound/types";
import { type ParameterFetcher, ssmParameterFetcher } from "./ssm-parameters";

// The fetcher's shape belongs to the module that implements it; named here too for callers
// (and tests) that hand loadSecrets a fake.
export type { ParameterFetcher };

/**
 * Secrets on AWS come from SST v2's `Config.Secret`. Binding one to a function sets
 * `SST_Secret_value_<NAME>` to this placeholder and grants `ssm:GetParameters` on
 * `<SST_SSM_PREFIX>Secret/<NAME>/value` (and the app-wide fallback `/sst/<app>/.fallback/...`);
 * `npx sst secrets set <NAME> <value> --stage <stage>` stores the value there as a SecureString.
 * Locally nothing is bound and secrets are plain environment variables.
 */
export const SST_SECRET_PLACEHOLDER = "__FETCH_FROM_SSM__";

const BINDING_PREFIX = "SST_Secret_value_";

/** The environment variable SST sets on a function a secret is bound to. */
export const secretBindingVariable = (name: string) => `${BINDING_PREFIX}${name}`;

/** Names of the secrets bound to this function whose values are waiting in SSM. */
export function boundSecretNames(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(env)
    .filter(([key, value]) => key.startsWith(BINDING_PREFIX) && value === SST_SECRET_PLACEHOLDER)
    .map(([key]) => key.slice(BINDING_PREFIX.length))
    .sort();
}

/** Where SST keeps a secret for this function's stage, and the app-wide fallback. */
export function secretParameterNames(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): { stage: string; fallback: string } {
  const app = env.SST_APP;
  const prefix = env.SST_SSM_PREFIX || (app && env.SST_STAGE && `/sst/${app}/${env.SST_STAGE}/`);
  if (!app || !prefix) {
    throw new Error(
      `Secret ${name} is bound but SST_APP / SST_SSM_PREFIX are not set: cannot find it in SSM.`,
    );
  }
  return {
    stage: `${prefix}Secret/${name}/value`,
    fallback: `/sst/${app}/.fallback/Secret/${name}/value`,
  };
}

export interface LoadSecretsOptions {
  /** Fetches parameters; SSM GetParameters (WithDecryption) unless given. Tests pass a fake. */
  fetch?: ParameterFetcher;
  /** Values already fetched, by parameter name. Defaults to one cache per process (cold start). */
  cache?: Map<string, Promise<string | undefined>>;
}

const coldStartCache = new Map<string, Promise<string | undefined>>();

/**
 * The secrets `names` as a synchronous source. A plain environment variable wins (that is the
 * local path, and an explicit override on AWS); otherwise a secret bound by SST is fetched from
 * SSM, once per cold start: a rotated value reaches the function on its next cold start (SST
 * restarts bound functions when a secret is set). A bound secret with no value in SSM reads as
 * unset, so the capability that needs it reports itself unavailable; SSM itself failing (denied,
 * throttled) rejects, so the function's start fails loudly and is retried.
 */
export async function loadSecrets(
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  options: LoadSecretsOptions = {},
): Promise<SecretSource> {
  const bound = new Set(boundSecretNames(env));
  const wanted = [...new Set(names)].filter((name) => !env[name] && bound.has(name));
  const values = new Map<string, string>();
  if (wanted.length > 0) {
    const fetch = options.fetch ?? ssmParameterFetcher(env);
    const cache = options.cache ?? coldStartCache;
    const paths = wanted.map((name) => ({ name, ...secretParameterNames(name, env) }));
    try {
      const staged = await fetchAll(
        paths.map((p) => p.stage),
        fetch,
        cache,
      );
      const unset = paths.filter((p) => staged.get(p.stage) === undefined);
      const fallbacks = await fetchAll(
        unset.map((p) => p.fallback),
        fetch,
        cache,
      );
      for (const p of paths) {
        const value = staged.get(p.stage) ?? fallbacks.get(p.fallback);
        if (value) values.set(p.name, value);
      }
    } catch (cause) {
      throw new Error(`Could not read the secrets ${wanted.join(", ")} from SSM.`, { cause });
    }
  }
  // Environment variables are read at use: an override set after start-up is still seen.
  return (name) => env[name] || values.get(name) || undefined;
}

/** Values of the parameters `names`, fetching (10 per call) only those not already cached. */
async function fetchAll(
  names: string[],
  fetch: ParameterFetcher,
  cache: Map<string, Promise<string | undefined>>,
): Promise<Map<string, string | undefined>> {
  const missing = names.filter((name) => !cache.has(name));
  for (let i = 0; i < missing.length; i += 10) {
    const chunk = missing.slice(i, i + 10);
    const request = fetch(chunk).then(
      (result) => new Map((result.Parameters ?? []).map((p) => [p.Name, p.Value])),
    );
    for (const name of chunk) {
      const value = request.then((found) => found.get(name) || undefined);
      // A failed fetch is not kept: the next attempt asks SSM again.
      value.catch(() => cache.delete(name));
      cache.set(name, value);
    }
  }
  const values = await Promise.all(names.map((name) => cache.get(name)));
  return new Map(names.map((name, i) => [name, values[i]]));
}

const STAGE_SECRET_TTL_MS = 5 * 60_000;
let stageCache = new Map<string, Promise<string | undefined>>();
let stageCacheBorn = Date.now();

/**
 * Any secret of this stage by name, bound to the function or not: registered toolsets name
 * their secrets at run time, after the deploy. An environment variable wins; on AWS the value
 * is read from the stage's SST secret in SSM (`npx sst secrets set NAME value --stage s`),
 * cached for five minutes so a secret set after a miss is seen soon without a redeploy.
 */
export async function readStageSecrets(
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  options: LoadSecretsOptions = {},
): Promise<SecretSource> {
  if (!env.SST_APP) return (name) => env[name] || undefined;
  if (Date.now() - stageCacheBorn > STAGE_SECRET_TTL_MS) {
    stageCache = new Map();
    stageCacheBorn = Date.now();
  }
  const asBound: NodeJS.ProcessEnv = { ...env };
  for (const name of names) {
    if (!env[name]) asBound[secretBindingVariable(name)] = SST_SECRET_PLACEHOLDER;
  }
  return loadSecrets(names, asBound, { cache: stageCache, ...options });
}

/** The first source that knows a secret answers; an empty value counts as unknown. */
export function firstSecret(...sources: readonly (SecretSource | undefined)[]): SecretSource {
  return (name) => {
    for (const source of sources) {
      const value = source?.(name);
      if (value) return value;
    }
    return undefined;
  };
}

/**
 * How registered toolsets' secrets are read, everywhere: what this function already knows
 * (`own`: its environment, its bound secrets), then the stage's secrets. Only names under the
 * registered prefix are read or answered: the others (the admin key, a built-in tool's
 * secret) belong to Toolbus, and on AWS these functions may not read them at all.
 */
export function stageSecretReader(
  own: SecretSource,
  env: NodeJS.ProcessEnv = process.env,
  options: LoadSecretsOptions = {},
) {
  return async (names: readonly string[]): Promise<SecretSource> => {
    const readable = names.filter(isRegisteredSecret);
    const source = firstSecret(own, await readStageSecrets(readable, env, options));
    return (name) => (isRegisteredSecret(name) ? source(name) : undefined);
  };
}
