import { z } from "zod";

// How the command groups read their arguments: the option kinds, and the schemas more than one
// group uses, so an option reads and fails the same way wherever it is given.

/** How an option is read off the command line, in node's parseArgs terms. */
export type OptionKind = { type: "string"; multiple?: true } | { type: "boolean" };

/** The option kinds there are, so a command says `limit: option.value`. */
export const option = {
  /** `--name <value>`, given once. */
  value: { type: "string" },
  /** `--name <value>`, given any number of times: an array. */
  repeated: { type: "string", multiple: true },
  /** `--name`, no value. */
  flag: { type: "boolean" },
} as const satisfies Record<string, OptionKind>;

export const text = z.string().trim();

/** A number in a range; `what` names the option in the messages, e.g. `--limit`. */
export const number = (what: string, min: number, max: number, integer: boolean) =>
  text
    .regex(
      integer ? /^\d+$/ : /^\d+(\.\d+)?$/,
      `${what} must be a ${integer ? "whole " : ""}number`,
    )
    .transform(Number)
    .pipe(z.number().min(min, `${what} is at least ${min}`).max(max, `${what} is at most ${max}`));

/** A workflow mode's name; the API says whether the stage has it. */
export const modeArg = z.string().min(1).max(64);

/** A page cursor, as the previous page gave it. */
export const cursorArg = z.string().min(1).max(2048);

/** A time on the command line: ISO 8601 with an offset, as the API takes it. */
export const isoArg = z.iso.datetime({
  offset: true,
  error: "an ISO date-time, e.g. 2026-05-01T09:00:00Z",
});
