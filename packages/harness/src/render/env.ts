import type { EnvHeader, McpServerConfig } from "../enrichers";
import { HARNESS_TABLE, type Harness } from "../harness-table";

/** The variable name `harness` reads, with the prefix it insists on (added once). */
export function harnessEnvName(harness: Harness, name: string): string {
  const { namePrefix } = HARNESS_TABLE.harnesses[harness].envReference;
  return name.startsWith(namePrefix) ? name : `${namePrefix}${name}`;
}

/** A header value that `harness` fills from the environment when it connects. */
export function envHeaderValue(harness: Harness, header: EnvHeader): string {
  const { required, optional } = HARNESS_TABLE.harnesses[harness].envReference;
  const template = header.optional ? optional : required;
  const name = harnessEnvName(harness, header.env);
  return `${header.prefix ?? ""}${template.replace("{name}", () => name)}`;
}

/** A remote server's headers as `harness` writes them: literal ones, then those read from the environment. */
export function harnessHeaders(
  harness: Harness,
  config: Extract<McpServerConfig, { url: string }>,
): Record<string, string> | undefined {
  const fromEnv = Object.entries(config.envHeaders ?? {}).map(
    ([name, header]) => [name, envHeaderValue(harness, header)] as const,
  );
  if (config.headers === undefined && fromEnv.length === 0) return undefined;
  return { ...config.headers, ...Object.fromEntries(fromEnv) };
}

/** Variables whose names `harness` changed, so the caller knows which ones to set. */
export function renamedEnvWarnings(
  harness: Harness,
  configs: readonly McpServerConfig[],
): string[] {
  const renamed = new Set<string>();
  for (const config of configs) {
    if (!("url" in config)) continue;
    for (const header of Object.values(config.envHeaders ?? {})) {
      const name = harnessEnvName(harness, header.env);
      if (name !== header.env) renamed.add(`${header.env} → ${name}`);
    }
  }
  if (renamed.size === 0) return [];
  const { title, envReference } = HARNESS_TABLE.harnesses[harness];
  return [
    `${title} reads only variables named ${envReference.namePrefix}…, so the file reads ${[...renamed].join(", ")}: set those (for the cloud agent, as Agents secrets or variables).`,
  ];
}
