import { type ParseArgsConfig, parseArgs } from "node:util";
import type { OptionKind } from "./arguments.js";
import type { Command } from "./command.js";
import { COMMANDS, type CommandName } from "./commands/index.js";
import { UsageError } from "./errors.js";

// The command line, read against the registry (commands/index.ts): which command, its
// arguments validated by its schema, and the help. Nothing here names a command.

/** The options every command takes. */
const GLOBAL_OPTIONS = {
  endpoint: { type: "string" },
  key: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const satisfies NonNullable<ParseArgsConfig["options"]>;

/**
 * Every option of every command, for parseArgs, which reads them before the command is known:
 * so an option's name has one kind everywhere (`--limit` cannot take a value for one command
 * and be a flag for another), checked here when the CLI loads.
 */
const OPTIONS = (() => {
  const options: NonNullable<ParseArgsConfig["options"]> = { ...GLOBAL_OPTIONS };
  for (const [name, spec] of Object.entries(COMMANDS)) {
    for (const [option, kind] of Object.entries(spec.options)) {
      const known = options[option];
      if (known && !sameKind(known, kind)) {
        throw new Error(
          `--${option} of toolbus ${name} is not the kind of option it is elsewhere.`,
        );
      }
      options[option] = kind;
    }
  }
  return options;
})();

function sameKind(a: { type: string; multiple?: boolean }, b: OptionKind): boolean {
  return a.type === b.type && Boolean(a.multiple) === ("multiple" in b && Boolean(b.multiple));
}

/** The command groups: the first words of two-word commands (`tools` of `tools list`). */
const GROUPS = new Set(
  Object.keys(COMMANDS).flatMap((name) => (name.includes(" ") ? [name.split(" ")[0] ?? ""] : [])),
);

/** The commands of a group (`tools` -> `tools list`, `tools show`, ...). */
function groupCommands(group: string): CommandName[] {
  return (Object.keys(COMMANDS) as CommandName[]).filter((name) => name.startsWith(`${group} `));
}

/** `toolbus <group> --help`: the group's commands, each with its usage and summary. */
export function groupHelp(group: string): string {
  const lines = groupCommands(group).map((name) => {
    const spec: Command = COMMANDS[name];
    return `  toolbus ${spec.usage}\n      ${spec.summary}`;
  });
  return `Usage: toolbus ${group} <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun toolbus ${group} <command> --help for one command's options.\n`;
}

export const HELP = `Usage: toolbus <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((spec) => `  toolbus ${spec.usage}\n      ${spec.summary}`)
  .join("\n")}

Options for every command:
  --version          print the version of toolbus
  --endpoint <url>   the API (default: TOOLBUS_ENDPOINT, then .toolbus/local.json of \`npm start\`)
  --key <key>        the API key (default: TOOLBUS_API_KEY, then .toolbus/admin-key); prefer
                     the environment variable: arguments are visible to other local users
  --json             machine-readable output on stdout (errors as JSON on stderr)
  -h, --help         show help (toolbus <command> --help for one command, toolbus <group>
                     --help, e.g. toolbus tools --help, for a group's)

Exit codes: 0 ok, 1 failure (API error, unreachable endpoint, or the called tool failed),
2 usage error (unknown command or option, invalid value, no endpoint or key).
`;

function commandHelp(name: CommandName): string {
  const spec: Command = COMMANDS[name];
  const lines = [`Usage: toolbus ${spec.usage}`, "", spec.summary];
  if (spec.help?.length) lines.push("", "Options:", ...spec.help.map((line) => `  ${line}`));
  lines.push("", "Also: --endpoint <url>, --key <key>, --json, --help (see toolbus --help).");
  return `${lines.join("\n")}\n`;
}

export interface Globals {
  endpoint?: string;
  key?: string;
  json: boolean;
}

/**
 * A command to run: `args` are what its schema gave, so `command.run` takes them (the parser
 * cannot prove that to the compiler, which sees every command as one `Command`).
 */
export type ParsedCommand =
  | { kind: "help"; text: string }
  | { kind: "version" }
  | { kind: "run"; name: CommandName; command: Command; args: unknown; globals: Globals };

/** Parses and validates the command line; anything wrong is a UsageError. */
export function parseCommandLine(argv: readonly string[]): ParsedCommand {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseArgsMessage(error), { cause: error });
  }
  const { values, positionals } = parsed;
  const [first, second] = positionals;
  if (first === undefined || first === "help") {
    if (values.help || first === "help") return { kind: "help", text: HELP };
    if (values.version) return { kind: "version" };
    throw new UsageError("No command given.", { hint: "Run toolbus --help for the commands." });
  }
  if (GROUPS.has(first) && second === undefined) {
    if (values.help) return { kind: "help", text: groupHelp(first) };
    throw new UsageError(`toolbus ${first} needs a command.`, {
      hint: `Try: ${groupCommands(first)
        .map((command) => `toolbus ${command}`)
        .join(", ")}; toolbus ${first} --help says more.`,
    });
  }
  const name = (GROUPS.has(first) ? `${first} ${second ?? ""}`.trim() : first) as CommandName;
  if (!(name in COMMANDS)) {
    const known = GROUPS.has(first) ? groupCommands(first) : [];
    throw new UsageError(`Unknown command: ${name}.`, {
      hint: known.length
        ? `Try: ${known.map((command) => `toolbus ${command}`).join(", ")}.`
        : "Run toolbus --help for the commands.",
    });
  }
  if (values.help) return { kind: "help", text: commandHelp(name) };

  const command: Command = COMMANDS[name];
  const usage = `Usage: toolbus ${command.usage}`;
  const given = positionals.slice(GROUPS.has(first) ? 2 : 1);
  if (given.length > command.args.length) {
    throw new UsageError(`Unexpected argument: ${given[command.args.length]}.`, { hint: usage });
  }
  const missing = command.args.slice(given.length);
  if (missing.length > 0) {
    throw new UsageError(`Missing <${missing.join("> <")}>.`, { hint: usage });
  }
  const own = Object.keys(command.options);
  const allowed = new Set<string>([...Object.keys(GLOBAL_OPTIONS), ...own]);
  const foreign = Object.keys(values).filter((option) => !allowed.has(option));
  if (foreign.length > 0) {
    throw new UsageError(
      `${foreign.map((option) => `--${option}`).join(", ")} ${foreign.length > 1 ? "are not options" : "is not an option"} of toolbus ${name}.`,
      { hint: usage },
    );
  }

  const input: Record<string, unknown> = {};
  for (const option of own) input[option] = values[option];
  for (const [index, arg] of command.args.entries()) input[arg] = given[index];
  const result = command.schema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? "");
      const label = command.args.includes(field) ? `<${field}>` : field ? `--${field}` : "";
      return label && !issue.message.startsWith("--")
        ? `${label}: ${issue.message}`
        : issue.message;
    });
    throw new UsageError(problems.join("; "), { hint: usage });
  }
  const globals: Globals = {
    json: values.json === true,
    ...(typeof values.endpoint === "string" ? { endpoint: values.endpoint } : {}),
    ...(typeof values.key === "string" ? { key: values.key } : {}),
  };
  return { kind: "run", name, command, args: result.data, globals };
}

function parseArgsMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // node adds advice for script authors ("To specify a positional argument ..."): not for us.
  const useful = message
    .split("\n")
    .map((line) => line.split(/\.?\s*To specify /)[0]?.trim() ?? "")
    .filter(Boolean)
    .map((line) => line.replace(/([^.?!])$/, "$1."));
  return useful.join(" ") || message;
}
