import { resolve } from "node:path";
import { callId, runId, toolId } from "@toolbus/wire/model";
import { z } from "zod";
import { modeArg, number, option } from "../arguments.js";
import { command } from "../command.js";
import type { CommandIo } from "../context.js";
import { callSummary, json } from "../format.js";
import { parseJson, readAll, readJsonFile } from "../input.js";

// `toolbus call` and `toolbus calls show`: calling a tool under a run, and reading a call back.

const callSchema = z
  .object({
    tool: toolId,
    run: runId.optional(),
    input: z.string().optional(),
    "input-file": z.string().min(1).optional(),
    "call-id": callId.optional(),
    mode: modeArg.optional(),
    wait: number("--wait", 0, 60, false).optional(),
  })
  .refine((v) => v.run !== undefined, { message: "--run <runId> is required", path: ["run"] })
  .refine((v) => v.input === undefined || v["input-file"] === undefined, {
    message: "give --input or --input-file, not both",
    path: ["input"],
  });

export const callsCommands = {
  call: command({
    usage:
      "call <tool> --run <runId> [--input '<json>' | --input-file <file>] [--call-id <id>] [--mode <m>] [--wait <seconds>]",
    summary: "Call a tool under a run. Exits 1 when the tool failed.",
    args: ["tool"],
    options: {
      input: option.value,
      "input-file": option.value,
      run: option.value,
      "call-id": option.value,
      mode: option.value,
      wait: option.value,
    },
    help: [
      "--run <runId>         the run the call belongs to (its events are logged under it)",
      "--input '<json>'      the tool's input as JSON (default {})",
      "--input-file <file>   read the input from a JSON file; - reads standard input",
      "--call-id <id>        your id for the call: the same id and input give the same call",
      "--mode <m>            workflow mode (default: the stage's)",
      "--wait <seconds>      how long to wait for the result, 0-60 (default: the stage's)",
    ],
    schema: callSchema,
    async run(args, { client, io, json: asJson }) {
      const input = await readInput(args, io);
      const call = await client.call(args.tool, input, {
        runId: args.run as string,
        ...(args["call-id"] ? { callId: args["call-id"] } : {}),
        ...(args.mode ? { mode: args.mode } : {}),
        ...(args.wait !== undefined ? { wait: args.wait } : {}),
        ...(io.signal ? { signal: io.signal } : {}),
      });
      io.stdout.write(asJson ? json(call) : callSummary(call));
      if (call.status !== "failed") return 0;
      const { failure } = call.result;
      if (asJson) {
        io.stderr.write(
          `${JSON.stringify({ error: { code: "tool_failed", message: failure.message, details: failure } })}\n`,
        );
      } else {
        io.stderr.write(`toolbus: ${call.toolId} failed: ${failure.kind}: ${failure.message}\n`);
      }
      return 1;
    },
  }),

  "calls cancel": command({
    usage: "calls cancel <runId> <callId>",
    summary:
      "Ask a call to stop: one not started yet fails cancelled at once, a running one is stopped unless it finishes first.",
    args: ["runId", "callId"],
    options: {},
    schema: z.object({ runId, callId }),
    async run(args, { client, io, json: asJson }) {
      const call = await client.cancelCall(args.runId, args.callId);
      io.stdout.write(asJson ? json(call) : callSummary(call));
      return 0;
    },
  }),

  "calls show": command({
    usage: "calls show <runId> <callId>",
    summary: "Show a call and, once finished, its result.",
    args: ["runId", "callId"],
    options: {},
    schema: z.object({ runId, callId }),
    async run(args, { client, io, json: asJson }) {
      const call = await client.getCall(args.runId, args.callId);
      io.stdout.write(asJson ? json(call) : callSummary(call));
      return 0;
    },
  }),
};

async function readInput(args: z.output<typeof callSchema>, io: CommandIo): Promise<unknown> {
  if (args.input !== undefined) return parseJson(args.input, "--input");
  const file = args["input-file"];
  if (file === undefined) return {};
  if (file === "-") return parseJson(await readAll(io.stdin), "the input on standard input");
  return readJsonFile(resolve(io.cwd, file), file);
}
