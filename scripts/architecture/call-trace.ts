/**
 * Follows one call through a checkout at run time: the system composed in-process as its
 * tests compose it (test/support/toolbus.ts, against a DynamoDB Local started here), one
 * synchronous REST call of a built-in tool to warm up, then one more call recorded file by
 * file. Prints one line, `CALL-TRACE <json>` (see `CallTrace`), for report.ts to read.
 *
 *   node --import tsx scripts/architecture/call-trace.ts [checkout root]
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { register } from "node:module";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BACK, ENTER } from "./instrument";
import type { TraceHookData } from "./trace-hooks";

/** Which files control passed through, in order, with a repeat only after another file. */
export interface FileSequence {
  sequence: string[];
}

export interface CallTrace {
  tool: string;
  /** From the route receiving the request to its answer. */
  answered: FileSequence;
  /** The same, continued until the system settled (announcements, the bus, the recorder). */
  settled: FileSequence;
}

export const TRACE_LINE = "CALL-TRACE ";
const TOOL = "readability_analyzer";
const TEXTS = [
  "The first call warms every lazy module up. It is not measured.",
  "The second call is the one followed. Its text differs, so no cached result answers it.",
];

async function main(): Promise<void> {
  const root = resolve(process.argv[2] ?? ".");
  const here = resolve(import.meta.dirname, "../..");
  register<TraceHookData>("./trace-hooks.ts", import.meta.url, { data: { root, here } });
  const recorder = installRecorder();

  const from = (path: string) => import(pathToFileURL(resolve(root, path)).href);
  // The database is scaffolding, not part of what is measured: this checkout's launcher
  // starts it, whatever the traced checkout has installed.
  const { startDynamoDbLocal } = await import("@toolbus/local/dynamodb");
  const dynamoDb = await startDynamoDbLocal();
  process.env.TOOLBUS_TRACE_DYNAMODB_ENDPOINT = dynamoDb.endpoint;
  try {
    const { startTestToolbus } = await from("test/support/toolbus.ts");
    const system = await startTestToolbus();
    try {
      const runId: string = system.runId();
      const call = async (callId: string, text: string) => {
        const response: Response = await recorder.within(() =>
          system.request(`/v1/runs/${runId}/calls`, {
            method: "POST",
            json: { tool: TOOL, input: { text }, callId, wait: 10 },
          }),
        );
        return { response, recorded: recorder.length() };
      };
      const expectSucceeded = async (response: Response) => {
        const body = (await response.json()) as { status?: string };
        if (response.status !== 200 || body.status !== "succeeded") {
          throw new Error(`The call answered ${response.status}: ${JSON.stringify(body)}`);
        }
      };

      await expectSucceeded((await call("warm-up", TEXTS[0] as string)).response);
      await system.settle();

      recorder.start();
      const { response, recorded } = await call("followed", TEXTS[1] as string);
      await system.settle();
      const sequence = recorder.stop();
      await expectSucceeded(response);

      const trace: CallTrace = {
        tool: TOOL,
        answered: { sequence: sequence.slice(0, recorded) },
        settled: { sequence },
      };
      process.stdout.write(`\n${TRACE_LINE}${JSON.stringify(trace)}\n`);
    } finally {
      await system.stop();
    }
  } finally {
    await dynamoDb.stop();
  }
}

/**
 * The two globals instrumented code calls. While switched on, they record file changes made
 * on the call's behalf: in its async context, which the work it starts inherits (a handler
 * run directly, an announcement, a timer it sets), while loops the system started before it
 * (pollers, followers) stay out.
 */
function installRecorder() {
  const call = new AsyncLocalStorage<true>();
  let on = false;
  let last: string | undefined;
  const sequence: string[] = [];
  const note = (file: string) => {
    if (on && file !== last && call.getStore()) {
      sequence.push(file);
      last = file;
    }
  };
  Object.assign(globalThis, {
    [ENTER]: note,
    [BACK]: (file: string, value: unknown) => {
      note(file);
      return value;
    },
  });
  return {
    start() {
      on = true;
    },
    stop() {
      on = false;
      return [...sequence];
    },
    length: () => sequence.length,
    within: <T>(work: () => T): T => call.run(true, work),
  };
}

export interface PathFigures {
  /** Distinct files, in the order first entered. */
  files: string[];
  /** Moves from one file to another. */
  transitions: number;
  /** Moves into a file control had already left. */
  returns: number;
  /** Distinct from -> to pairs among those: a loop calling across files counts once. */
  distinctReturns: number;
}

/** What a recorded sequence of files amounts to. */
export function pathFigures(sequence: readonly string[]): PathFigures {
  const seen = new Set<string>();
  const back = new Set<string>();
  let returns = 0;
  sequence.forEach((file, at) => {
    if (seen.has(file)) {
      returns++;
      back.add(`${sequence[at - 1]} -> ${file}`);
    }
    seen.add(file);
  });
  return {
    files: [...seen],
    transitions: Math.max(0, sequence.length - 1),
    returns,
    distinctReturns: back.size,
  };
}

/** The sequence up to and including the first entry into `file`; all of it if never. */
export function through(sequence: readonly string[], file: string): string[] {
  const at = sequence.indexOf(file);
  return at === -1 ? [...sequence] : sequence.slice(0, at + 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
