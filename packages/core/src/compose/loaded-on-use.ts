import { once } from "./pieces";

/**
 * A port whose every method is async, implemented by code loaded with its first call: the
 * API's cold start carries only this stand-in (the API is built in chunks, so the import
 * becomes one). `methods` names them all; a method left out is simply absent.
 */
export function loadedOnUse<T extends object>(
  load: () => Promise<T>,
  methods: readonly (keyof T & string)[],
): T {
  const target = once(load);
  const port: Record<string, unknown> = {};
  for (const name of methods) {
    port[name] = async (...args: unknown[]) => {
      const loaded = await target();
      return (loaded[name] as (...given: unknown[]) => unknown).apply(loaded, args);
    };
  }
  return port as T;
}
