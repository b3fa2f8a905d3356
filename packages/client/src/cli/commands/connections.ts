import { connectionProviderName } from "@toolbus/wire/schemas";
import { z } from "zod";
import { option, text } from "../arguments.js";
import { command } from "../command.js";
import { json, list, table } from "../format.js";

// `toolbus connections ...`: your accounts at OAuth providers, for tools that act as you.
// Connecting happens in a browser; these commands never see a token.

const providerArg = text.pipe(connectionProviderName);
const principalArg = text.pipe(
  z
    .string()
    .min(1)
    .max(256)
    .regex(/^[\x21-\x7E]+$/, "a principal id: printable, no spaces"),
);
const scopeArg = z
  .string()
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, "one scope per --scope: no spaces or quotes")
  .max(200);

export const connectionsCommands = {
  "connections list": command({
    usage: "connections list [--principal <id> | --all]",
    summary:
      "List your connected accounts (never a token); an admin's --principal reads another's, --all everyone's.",
    args: [],
    options: { principal: option.value, all: option.flag },
    schema: z
      .object({ principal: principalArg.optional(), all: z.boolean().optional() })
      .refine((v) => !(v.all && v.principal), {
        message: "give --principal or --all, not both",
        path: ["all"],
      }),
    async run(args, { client, io, json: asJson }) {
      const connections = await client.connections.list({
        ...(args.principal ? { principal: args.principal } : {}),
        ...(args.all ? { all: true } : {}),
      });
      if (asJson) io.stdout.write(json(connections));
      else if (connections.length === 0) {
        io.stdout.write("No connected accounts: toolbus connections connect <provider>.\n");
      } else {
        const everyone = Boolean(args.all || args.principal);
        io.stdout.write(
          table(
            [...(everyone ? ["PRINCIPAL"] : []), "PROVIDER", "STATUS", "SCOPES", "CONNECTED"],
            connections.map((connection) => [
              ...(everyone ? [connection.principalId] : []),
              connection.provider,
              connection.status === "expired" && connection.reason
                ? `expired: ${connection.reason}`
                : connection.status,
              list(connection.scopes),
              connection.connectedAt,
            ]),
          ),
        );
      }
      return 0;
    },
  }),

  "connections providers": command({
    usage: "connections providers",
    summary: "The providers this stage connects accounts at, and whether you have connected each.",
    args: [],
    options: {},
    schema: z.object({}),
    async run(_args, { client, io, json: asJson }) {
      const providers = await client.connections.providers();
      if (asJson) io.stdout.write(json(providers));
      else if (providers.length === 0) {
        io.stdout.write("This stage configures no providers for connected accounts.\n");
      } else {
        io.stdout.write(
          table(
            ["PROVIDER", "SCOPES", "CONNECTED"],
            providers.map((provider) => [
              provider.name,
              list(provider.scopes),
              provider.connected ? "yes" : (provider.status ?? "no"),
            ]),
          ),
        );
      }
      return 0;
    },
  }),

  "connections connect": command({
    usage: "connections connect <provider> [--scope <scope> ...]",
    summary:
      "Print a link that connects your account at the provider: open it in your own browser within 15 minutes, and share it with no one.",
    args: ["provider"],
    options: { scope: option.repeated },
    schema: z.object({
      provider: providerArg,
      scope: z.array(scopeArg).max(50).optional(),
    }),
    async run(args, { client, io, json: asJson }) {
      const link = await client.connections.link(
        args.provider,
        args.scope?.length ? { scopes: args.scope } : {},
      );
      io.stdout.write(
        asJson
          ? json(link)
          : `Open this link in your browser to connect ${args.provider} (it works until ${link.expiresAt}; share it with no one):\n${link.url}\n`,
      );
      return 0;
    },
  }),

  "connections disconnect": command({
    usage: "connections disconnect <provider> [--principal <id>]",
    summary:
      "Disconnect your account at the provider and revoke its tokens there; an admin's --principal disconnects another's.",
    args: ["provider"],
    options: { principal: option.value },
    schema: z.object({ provider: providerArg, principal: principalArg.optional() }),
    async run(args, { client, io, json: asJson }) {
      const outcome = await client.connections.disconnect(
        args.provider,
        args.principal ? { principal: args.principal } : {},
      );
      io.stdout.write(
        asJson
          ? json(outcome)
          : `Disconnected ${args.provider}${args.principal ? ` for ${args.principal}` : ""}; ${
              outcome.revoked
                ? "the provider revoked its tokens."
                : "the provider did not confirm a revocation (revoke Toolbus's access in your account settings there to be sure)."
            }\n`,
      );
      return 0;
    },
  }),
};
