/**
 * A module loaded on its first use and kept: `const analysis = onFirstUse(() => import("./x"))`,
 * then `(await analysis()).run(...)`. Calling `import()` on every request is not free even for
 * a module already loaded: each call resolves the specifier again (through the loader's hooks
 * under tsx, through the module map in a bundle) and costs extra turns of the event loop on a
 * request's path. A failed load is forgotten, so the next use tries again.
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };
}
