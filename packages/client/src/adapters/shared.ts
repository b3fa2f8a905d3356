import { type CallView, type Tool, type ToolbusClient, ToolbusClientError } from "@toolbus/client";
import { z } from "zod";

/** What every adapter is given: the run its calls belong to and what to select for. */
export interface ToolbusAdapterOptions {
  /** The run every call is made under: its events are logged and announced under it. */
  runId: string;
  /** Workflow mode to select for and call in (default: the stage's). */
  mode?: string;
  /** Select as this role (default: the API key's own; never above it). */
  role?: string;
  /** Only these tool ids may be selected. */
  allow?: readonly string[];
  /** These tool ids are never selected. */
  deny?: readonly string[];
  /** Seconds each call waits for its result (default and cap: the stage's). */
  wait?: number;
}

const identifier = z.string().min(1).max(128);
const adapterOptions = z
  .object({
    runId: identifier,
    mode: z.string().min(1).max(64).optional(),
    role: z.string().min(1).max(64).optional(),
    allow: z.array(identifier).optional(),
    deny: z.array(identifier).optional(),
    wait: z.number().min(0).optional(),
  })
  .strict();

/**
 * The options, checked before any request: a typo (`runid`) fails here with its path rather
 * than as a model's tool call failing later. The API checks the values themselves again.
 */
export function adapterOptionsOf(options: ToolbusAdapterOptions): ToolbusAdapterOptions {
  const parsed = adapterOptions.safeParse(options);
  if (!parsed.success) {
    throw new ToolbusClientError("invalid_options", "The adapter options are not valid.", {
      details: parsed.error.issues.map((issue) => ({
        path: issue.path.join(".") || "(options)",
        message: issue.message,
      })),
    });
  }
  return parsed.data;
}

/**
 * The tools the API's own selection (`POST /v1/select`) makes available for these options, in
 * its order, with the specs an adapter describes them by. Selection is not repeated here: a
 * tool is offered to a model exactly when the API would let the key call it.
 */
export async function selectedTools(
  client: ToolbusClient,
  options: ToolbusAdapterOptions,
): Promise<Tool[]> {
  const { mode, role, allow, deny } = options;
  const selection = await client.select({
    ...(mode !== undefined ? { mode } : {}),
    ...(role !== undefined ? { role } : {}),
    ...(allow !== undefined ? { allow: [...allow] } : {}),
    ...(deny !== undefined ? { deny: [...deny] } : {}),
  });
  const listed = await client.tools.list(mode !== undefined ? { mode } : {});
  const byId = new Map(listed.map((tool) => [tool.id, tool]));
  // A tool removed between the two requests is left out rather than offered without a spec.
  return selection.tools.flatMap((id) => {
    const tool = byId.get(id);
    return tool ? [tool] : [];
  });
}

/** What a model gets back from a tool: the same shape from every adapter. */
export type ToolbusToolResult =
  | {
      status: "succeeded";
      /** Text for the model to read. */
      output: string;
      data: unknown;
      citations: { url: string; title?: string | undefined }[];
    }
  | {
      status: "failed";
      /** What went wrong and what to do next: `correct_call`, `replan` or `finish`. */
      failure: { kind: string; message: string; recovery: string; details?: unknown };
    }
  /** Not finished yet (a call awaiting a person's approval too): its result comes later. */
  | { status: "awaiting_approval" | "pending" | "running"; callId: string; message: string };

/**
 * Calls one tool through Toolbus and shapes the answer for a model. A tool that fails is a
 * result the model can act on, and so is input the API refused (400): the model wrote it and
 * can correct it. Anything else (no response, a refused key) is the program's to handle and
 * is thrown as a ToolbusClientError.
 */
export async function callForModel(
  client: ToolbusClient,
  toolId: string,
  input: unknown,
  options: ToolbusAdapterOptions & { signal?: AbortSignal | undefined },
): Promise<ToolbusToolResult> {
  let call: CallView;
  try {
    call = await client.call(toolId, input, {
      runId: options.runId,
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
      ...(options.wait !== undefined ? { wait: options.wait } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (error instanceof ToolbusClientError && error.status === 400) {
      return invalidInput(error.message, error.details);
    }
    throw error;
  }
  switch (call.status) {
    case "succeeded":
      return {
        status: "succeeded",
        output: call.result.output,
        data: call.result.data,
        citations: call.result.citations.map(({ url, title }) => ({ url, title })),
      };
    case "failed": {
      const { kind, message, recovery } = call.result.failure;
      return { status: "failed", failure: { kind, message, recovery } };
    }
    default:
      return {
        status: call.status,
        callId: call.callId,
        message: `The call is still ${call.status}; its result will be in run ${call.parentRunId}.`,
      };
  }
}

/** Arguments the model wrote that the tool cannot take: it may try again, corrected. */
export function invalidInput(message: string, details?: unknown): ToolbusToolResult {
  return {
    status: "failed",
    failure: {
      kind: "invalid_input",
      message,
      recovery: "correct_call",
      ...(details !== undefined ? { details } : {}),
    },
  };
}
