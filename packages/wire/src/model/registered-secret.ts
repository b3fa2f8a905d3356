// No zod here: every function's secret reader imports this, and the stack reads the prefix.

/**
 * The only secrets a registered toolset may name. On AWS the functions that run registered
 * tools may read these and no other secret of the stage, so a registration can never send the
 * admin key or a built-in tool's secret (GITHUB_TOKEN, SEARCH_API_KEY, ...) to an upstream of
 * its choosing. The stack grants exactly this prefix: import it, never repeat it.
 */
export const REGISTERED_SECRET_PREFIX = "TOOLSET_";

/** Whether a registered toolset may name this secret (and its tools read it). */
export const isRegisteredSecret = (name: string): boolean =>
  name.startsWith(REGISTERED_SECRET_PREFIX);

/**
 * The prefix rule in words, for a refused registration and for a stored one (named before the
 * rule) that is unavailable until it is registered again.
 */
export function registeredSecretRule(name: string): string {
  const fixed = isRegisteredSecret(name) ? name : `${REGISTERED_SECRET_PREFIX}${name}`;
  return `registered toolsets may only name secrets starting with ${REGISTERED_SECRET_PREFIX} (${fixed}): other secrets of the stage belong to Toolbus and its built-in tools`;
}
