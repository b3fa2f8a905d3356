import type { ToolCredentials, toolCredentials } from "@toolbus/wire/model/tool";
import type * as z from "zod";
import type { StageConfig } from "../config";

/**
 * The secret name under which a tool acting as its caller reads the caller's token at
 * `provider`. Not a name a stage secret can have (those are upper-case letters, digits and _),
 * so it never reads anything of the stage's.
 */
export const connectionSecret = (provider: string) => `connection:${provider}`;

/**
 * Whose account a tool acts with on this stage: its declaration, in `user` mode when the
 * stage configuration says so for it (`connections.credentials.<id>`). The one place this is
 * decided: the catalog's views, selection and the tool's run all ask it.
 */
export function credentialsOf(
  tool: DeclaringTool,
  config: Pick<StageConfig, "connections">,
): ToolCredentials | undefined {
  const declared = tool.credentials;
  if (!declared) return undefined;
  const mode = config.connections?.credentials[tool.id] ?? declared.mode;
  return { ...declared, scopes: declared.scopes ?? [], mode };
}

/** A tool as its definition (scopes may be left out) or its catalog entry declares it. */
type DeclaringTool = { id: string; credentials?: z.input<typeof toolCredentials> | undefined };

/** Whether the tool acts as its caller: then its calls need the caller's connection. */
export function actsAsUser(
  tool: DeclaringTool,
  config: Pick<StageConfig, "connections">,
): ToolCredentials | undefined {
  const credentials = credentialsOf(tool, config);
  return credentials?.mode === "user" ? credentials : undefined;
}
