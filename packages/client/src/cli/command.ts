import type { z } from "zod";
import type { OptionKind } from "./arguments.js";
import type { CommandContext } from "./context.js";

// What a command is: everything `toolbus` knows of it, kept together in its group's file
// (commands/*.ts). The parser, the help and the dispatcher are generic and read only this.

export interface Command<S extends z.ZodType = z.ZodType> {
  /** The synopsis after `toolbus `, as every help shows it. */
  usage: string;
  /** One line: what the command does. */
  summary: string;
  /** The positional arguments' names, in order; `schema` sees each under its name. */
  args: readonly string[];
  /** The command's own options (the global ones come on top); `schema` sees each by name. */
  options: Readonly<Record<string, OptionKind>>;
  /** Lines of option help shown by `toolbus <command> --help`. */
  help?: readonly string[];
  /** Validates the arguments and options; its messages are what a usage error says. */
  schema: S;
  /** Runs the command; resolves to its exit code (0 ok, 1 failure, 130 interrupted). */
  run(args: z.output<S>, context: CommandContext): Promise<number>;
}

/** A command, with `run`'s arguments typed by what its schema gives. */
export function command<S extends z.ZodType>(spec: Command<S>): Command<S> {
  return spec;
}
