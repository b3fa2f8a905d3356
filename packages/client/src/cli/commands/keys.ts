import { z } from "zod";
import { option } from "../arguments.js";
import { command } from "../command.js";
import { fields, json, table } from "../format.js";

// `toolbus keys ...`: the stage's API keys (admin).

export const keysCommands = {
  "keys create": command({
    usage: "keys create --name <name> --role <role> [--acts-for]",
    summary:
      "Create an API key (admin). The key is shown once. --acts-for: it may act for end users it names (X-Toolbus-On-Behalf-Of).",
    args: [],
    options: { name: option.value, role: option.value, "acts-for": option.flag },
    schema: z
      .object({
        name: z.string().min(1).max(120).optional(),
        role: z.string().min(1).max(64).optional(),
        "acts-for": z.boolean().optional(),
      })
      .refine((v) => v.name !== undefined, { message: "--name is required", path: ["name"] })
      .refine((v) => v.role !== undefined, { message: "--role is required", path: ["role"] }),
    async run(args, { client, io, json: asJson }) {
      const created = await client.keys.create({
        name: args.name as string,
        role: args.role as string,
        ...(args["acts-for"] ? { actsFor: true } : {}),
      });
      if (asJson) io.stdout.write(json(created));
      else {
        io.stdout.write(
          `${fields([
            ["Key", created.key],
            ["Key id", created.keyId],
            ["Name", created.name],
            ["Role", created.role],
            ...(created.actsFor ? ([["Acts for end users", "yes"]] as [string, string][]) : []),
            ["Created", created.createdAt],
          ])}\nKeep the key now: it is shown only once.\n`,
        );
      }
      return 0;
    },
  }),

  "keys list": command({
    usage: "keys list",
    summary: "List API keys (admin); never the keys themselves.",
    args: [],
    options: {},
    schema: z.object({}),
    async run(_args, { client, io, json: asJson }) {
      const keys = await client.keys.list();
      if (asJson) io.stdout.write(json(keys));
      else if (keys.length === 0) io.stdout.write("No API keys yet: toolbus keys create.\n");
      else {
        io.stdout.write(
          table(
            ["KEY ID", "NAME", "ROLE", "CREATED", "LAST USED", "STATUS"],
            keys.map((key) => [
              key.keyId,
              key.name,
              key.role,
              key.createdAt,
              key.lastUsedAt ?? "-",
              key.revokedAt ? `revoked ${key.revokedAt}` : "active",
            ]),
          ),
        );
      }
      return 0;
    },
  }),

  "keys revoke": command({
    usage: "keys revoke <keyId>",
    summary: "Revoke an API key (admin).",
    args: ["keyId"],
    options: {},
    schema: z.object({
      keyId: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "not a key id"),
    }),
    async run(args, { client, io, json: asJson }) {
      const revoked = await client.keys.revoke(args.keyId);
      io.stdout.write(
        asJson
          ? json(revoked)
          : `Revoked key ${revoked.keyId} (${revoked.name}, ${revoked.role}) at ${revoked.revokedAt ?? "now"}.\n`,
      );
      return 0;
    },
  }),
};
