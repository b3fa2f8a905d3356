import { CATEGORIES, toolId } from "@toolbus/wire/model";
import { z } from "zod";
import { modeArg, number, option } from "../arguments.js";
import { command } from "../command.js";
import type { CommandContext } from "../context.js";
import { fields, indent, json, list, table } from "../format.js";

// `toolbus tools ...`: the catalog's tools, what each is, and (admin) who may use each.

export const toolsCommands = {
  "tools list": command({
    usage: "tools list [--category <c>] [--toolset <t>] [--mode <m>] [--available | --unavailable]",
    summary: "List the catalog's tools and whether each is available to you.",
    args: [],
    options: {
      category: option.value,
      toolset: option.value,
      mode: option.value,
      available: option.flag,
      unavailable: option.flag,
    },
    help: [
      `--category <c>   one of ${CATEGORIES.join(", ")}`,
      "--toolset <t>    only this toolset's tools",
      "--mode <m>       tools offered in this workflow mode (and availability judged in it)",
      "--available      only tools you can call now; --unavailable: only the others, with why",
    ],
    schema: z
      .object({
        category: z
          .enum(CATEGORIES, { error: `--category is one of ${CATEGORIES.join(", ")}` })
          .optional(),
        toolset: toolId.optional(),
        mode: modeArg.optional(),
        available: z.boolean().optional(),
        unavailable: z.boolean().optional(),
      })
      .refine(
        (v) => !(v.available && v.unavailable),
        "--available and --unavailable exclude each other",
      ),
    async run(args, { client, io, json: asJson }) {
      const tools = await client.tools.list({
        ...(args.category ? { category: args.category } : {}),
        ...(args.toolset ? { toolset: args.toolset } : {}),
        ...(args.mode ? { mode: args.mode } : {}),
        ...(args.available ? { available: true } : args.unavailable ? { available: false } : {}),
      });
      if (asJson) io.stdout.write(json(tools));
      else if (tools.length === 0) io.stdout.write("No tools match.\n");
      else {
        io.stdout.write(
          table(
            ["ID", "TOOLSET", "CATEGORY", "AVAILABLE", "TITLE"],
            tools.map((tool) => [
              tool.id,
              tool.toolset,
              tool.category,
              tool.available ? "yes" : `no (${list(tool.reasons)})`,
              tool.title,
            ]),
          ),
        );
      }
      return 0;
    },
  }),

  "tools search": command({
    usage: "tools search <query> [--limit <n>] [--mode <m>] [--explain]",
    summary: "Find the tools you can call for a need in words, best first.",
    args: ["query"],
    options: { limit: option.value, mode: option.value, explain: option.flag },
    help: [
      '<query>          the need, in quotes: "refund a payment"',
      "--limit <n>      how many, 1-50 (default 5)",
      "--mode <m>       search the tools offered in this workflow mode",
      "--explain        say why each tool was found; an admin also sees what was left out",
    ],
    schema: z.object({
      query: z.string().trim().min(1, "<query> is the need, in words").max(500),
      limit: number("--limit", 1, 50, true).optional(),
      mode: modeArg.optional(),
      explain: z.boolean().optional(),
    }),
    async run(args, { client, io, json: asJson }) {
      const found = await client.tools.search(args.query, {
        ...(args.limit ? { limit: args.limit } : {}),
        ...(args.mode ? { mode: args.mode } : {}),
        ...(args.explain ? { explain: true } : {}),
      });
      if (asJson) io.stdout.write(json(found));
      else if (found.tools.length === 0) io.stdout.write("No tool you can call matches.\n");
      else {
        io.stdout.write(
          table(
            ["ID", "SCORE", "TITLE", "MATCHED"],
            found.tools.map((tool) => [
              tool.id,
              tool.score.toFixed(2),
              tool.title,
              tool.explanation ? explained(tool.explanation) : list(tool.matched),
            ]),
          ),
        );
        if (found.excluded?.length) {
          io.stdout.write("\nLeft out for you (matching, but not offered):\n");
          for (const out of found.excluded) io.stdout.write(`  ${out.why}\n`);
        }
      }
      return 0;
    },
  }),

  "tools show": command({
    usage: "tools show <id>",
    summary: "Show one tool: description, guidelines and input schema.",
    args: ["id"],
    options: {},
    schema: z.object({ id: toolId }),
    async run(args, { client, io, json: asJson }) {
      const tool = await client.tools.get(args.id);
      if (asJson) {
        io.stdout.write(json(tool));
        return 0;
      }
      const annotations = [
        tool.annotations.readOnly ? "read-only" : "writes",
        tool.annotations.openWorld ? "open-world" : "closed-world",
        tool.annotations.idempotent ? "idempotent" : "not idempotent",
      ];
      const parts = [
        fields([
          ["Tool", `${tool.id} - ${tool.title}`],
          ["Toolset", tool.toolset],
          ["Category", `${tool.category} (${tool.optionality})`],
          ["Enabled", tool.availability.enabled ? "yes" : "no"],
          ["Modes", tool.availability.modes ? list(tool.availability.modes) : "all"],
          ["Min role", tool.availability.minRole],
          ["Requires", list(tool.requires)],
          ["Produces", list(tool.produces)],
          ["Fallback", tool.fallback],
          ["Behaviour", annotations.join(", ")],
          ["Timeout", `${tool.timeoutMs} ms`],
          ["Version", `${tool.version} (revision ${tool.revision})`],
        ]),
        `\n${tool.description}\n`,
        `\nWhen to use: ${tool.usageHint}\n`,
      ];
      if (tool.guidelines.do.length > 0) {
        parts.push(`\nDo:\n${tool.guidelines.do.map((line) => `  - ${line}\n`).join("")}`);
      }
      if (tool.guidelines.dont.length > 0) {
        parts.push(`\nDon't:\n${tool.guidelines.dont.map((line) => `  - ${line}\n`).join("")}`);
      }
      parts.push(`\nInput schema:\n${indent(json(tool.inputSchema))}`);
      if (tool.examples.length > 0) {
        parts.push(
          `\nExamples:\n${tool.examples.map((example) => `  ${example.title}: ${JSON.stringify(example.input)}\n`).join("")}`,
        );
      }
      io.stdout.write(parts.join(""));
      return 0;
    },
  }),

  "tools enable": command({
    usage: "tools enable <id>",
    summary: "Enable a tool on this stage (admin): selection may offer it again.",
    args: ["id"],
    options: {},
    schema: z.object({ id: toolId }),
    run: (args, context) => setEnabled(args.id, true, context),
  }),

  "tools disable": command({
    usage: "tools disable <id>",
    summary: "Disable a tool on this stage (admin): no selection offers it (reason: disabled).",
    args: ["id"],
    options: {},
    schema: z.object({ id: toolId }),
    run: (args, context) => setEnabled(args.id, false, context),
  }),

  "tools availability": command({
    usage:
      "tools availability <id> [--min-role <r> | --all-roles] [--modes <a,b> | --all-modes] [--enabled true|false]",
    summary: "Show or set who may use a tool on this stage (admin to set), built-in or registered.",
    args: ["id"],
    options: {
      "min-role": option.value,
      "all-roles": option.flag,
      modes: option.value,
      "all-modes": option.flag,
      enabled: option.value,
    },
    help: [
      "--min-role <r>    the lowest role that may see and call it, e.g. member",
      "--all-roles       open it to every role (drops minRole)",
      "--modes <a,b>     the workflow modes it is offered in, comma-separated",
      "--all-modes       offer it in every mode (drops modes)",
      "--enabled <b>     true or false: whether selection may offer it at all",
      "Options not given keep their current value; with none, the current availability is shown.",
    ],
    schema: z
      .object({
        id: toolId,
        "min-role": z.string().trim().min(1, "--min-role names a role").max(64).optional(),
        "all-roles": z.boolean().optional(),
        modes: z
          .string()
          .transform((value) =>
            value
              .split(",")
              .map((mode) => mode.trim())
              .filter((mode) => mode.length > 0),
          )
          .pipe(z.array(modeArg).min(1, "--modes lists at least one mode, e.g. default,review"))
          .optional(),
        "all-modes": z.boolean().optional(),
        enabled: z
          .enum(["true", "false"], { error: "--enabled is true or false" })
          .transform((value) => value === "true")
          .optional(),
      })
      .refine((v) => !(v["min-role"] !== undefined && v["all-roles"]), {
        message: "--min-role and --all-roles exclude each other",
        path: ["min-role"],
      })
      .refine((v) => !(v.modes !== undefined && v["all-modes"]), {
        message: "--modes and --all-modes exclude each other",
        path: ["modes"],
      }),
    async run(args, { client, io, json: asJson }) {
      const current = await client.tools.get(args.id);
      const changes =
        args["min-role"] !== undefined ||
        args["all-roles"] ||
        args.modes !== undefined ||
        args["all-modes"] ||
        args.enabled !== undefined;
      let tool = current;
      if (changes) {
        const { minRole, modes, enabled } = current.availability;
        const nextMinRole = args["all-roles"] ? undefined : (args["min-role"] ?? minRole);
        const nextModes = args["all-modes"] ? undefined : (args.modes ?? modes);
        // Only the revision just read is changed: a concurrent edit is a 409, not lost.
        tool = await client.tools.setAvailability(
          args.id,
          {
            enabled: args.enabled ?? enabled,
            ...(nextModes !== undefined ? { modes: nextModes } : {}),
            ...(nextMinRole !== undefined ? { minRole: nextMinRole } : {}),
          },
          { ifMatch: current.revision },
        );
      }
      io.stdout.write(
        asJson
          ? json(tool)
          : `${changes ? "Set" : "Tool"} ${tool.id}: ${describeAvailability(tool.availability)} (revision ${tool.revision}).\n`,
      );
      return 0;
    },
  }),
};

function describeAvailability(availability: {
  enabled: boolean;
  modes?: string[] | undefined;
  minRole?: string | undefined;
}): string {
  return [
    availability.enabled ? "enabled" : "disabled",
    availability.modes ? `modes ${availability.modes.join(", ")}` : "every mode",
    availability.minRole ? `role ${availability.minRole} and above` : "every role",
  ].join(", ");
}

async function setEnabled(
  id: string,
  enabled: boolean,
  { client, io, json: asJson }: CommandContext,
): Promise<number> {
  const tool = enabled ? await client.tools.enable(id) : await client.tools.disable(id);
  io.stdout.write(
    asJson
      ? json(tool)
      : `${enabled ? "Enabled" : "Disabled"} tool ${tool.id} (revision ${tool.revision}).\n`,
  );
  return 0;
}

/** "folder in description (as directory); needs your github connection" */
function explained(explanation: {
  words: { word: string; fields: string[]; as?: string[] }[];
  notes: string[];
}): string {
  const words = explanation.words.map(
    (w) => `${w.word} in ${w.fields.join(", ")}${w.as?.length ? ` (as ${w.as.join(", ")})` : ""}`,
  );
  return [...words, ...explanation.notes].join("; ");
}
