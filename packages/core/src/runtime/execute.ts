import type { Citation, Failure } from "@toolbus/wire/model/call";
import type { ContentBlock } from "@toolbus/wire/model/content";
import { Failures } from "@toolbus/wire/model/failure";
import type { StageConfig } from "../config";
import type { HttpClient, SecretSource } from "../outbound/types";
import { boundCaller, type CallerLink, NO_CALLER } from "../relay/link";
import { type AnyToolDefinition, ToolFailure, toolPolicyOf } from "../tool-definition";

type Execution =
  | { ok: true; output: string; data: unknown; citations: Citation[]; content?: ContentBlock[] }
  | { ok: false; failure: Failure };

/**
 * Runs one tool with its timeout and turns every way it can end into a result: a tool
 * failure is data for the agent, never an exception for the bus to retry.
 */
export async function executeTool(
  tool: AnyToolDefinition,
  input: unknown,
  context: {
    callId: string;
    parentRunId: string;
    config: StageConfig;
    now: () => Date;
    http: HttpClient;
    secret: SecretSource;
    /** Where the tool's progress goes (the call's throttled announcer); nowhere by default. */
    progress?: (progress: number, total?: number, message?: string) => void;
    /** The live caller of the call; nobody by default. */
    caller?: CallerLink;
    /** Aborts when the call is cancelled: the tool is stopped as at its timeout. */
    cancelled?: AbortSignal;
  },
): Promise<Execution> {
  const id = tool.spec.id;
  const settings = tool.settings?.safeParse(context.config.tools[id] ?? {});
  if (settings && !settings.success) {
    return fail("unavailable", `${id} is not configured correctly on this stage.`, false, "replan");
  }
  const parsedInput = tool.input.safeParse(input);
  if (!parsedInput.success) {
    return fail(
      "internal",
      "The stored input no longer matches the tool's schema.",
      false,
      "correct_call",
    );
  }
  const timeoutMs = toolPolicyOf(tool).timeoutMs;
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error("timeout"));
      resolve("timeout");
    }, timeoutMs);
  });
  let onCancel: (() => void) | undefined;
  const cancelled = new Promise<"cancelled">((resolve) => {
    onCancel = () => {
      controller.abort(new Error("cancelled"));
      resolve("cancelled");
    };
    if (context.cancelled?.aborted) onCancel();
    else context.cancelled?.addEventListener("abort", onCancel, { once: true });
  });
  try {
    const outcome = await Promise.race([
      cancelled,
      tool.execute(parsedInput.data, {
        callId: context.callId,
        parentRunId: context.parentRunId,
        signal: controller.signal,
        settings: settings?.data,
        http: context.http,
        secret: context.secret,
        now: context.now,
        progress: context.progress ?? (() => undefined),
        caller: boundCaller(context.caller ?? NO_CALLER, controller.signal),
      }),
      timedOut,
    ]);
    if (outcome === "timeout") {
      return fail("timeout", `${id} did not finish within ${timeoutMs} ms.`, true, "replan");
    }
    if (outcome === "cancelled") {
      return { ok: false, failure: Failures.cancelled(`${id} was cancelled before it finished.`) };
    }
    const data = tool.output.safeParse(outcome.data);
    if (!data.success) {
      return fail(
        "invalid_output",
        `${id} returned data that does not match its schema.`,
        false,
        "replan",
      );
    }
    return {
      ok: true,
      output: outcome.output,
      data: data.data,
      citations: outcome.citations ?? [],
      ...(outcome.content ? { content: outcome.content } : {}),
    };
  } catch (error) {
    if (error instanceof ToolFailure) return { ok: false, failure: error.failure };
    return fail("internal", `${id} failed unexpectedly.`, false, "replan");
  } finally {
    clearTimeout(timer);
    if (onCancel) context.cancelled?.removeEventListener("abort", onCancel);
  }
}

function fail(
  kind: Failure["kind"],
  message: string,
  retryable: boolean,
  recovery: Failure["recovery"],
): Execution {
  return { ok: false, failure: { kind, message, retryable, recovery } };
}
