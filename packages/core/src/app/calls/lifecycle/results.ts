import type { CallRecord, CallResult, Failure } from "../../../model/call";
import { Failures } from "../../../model/failure";
import { completionTime } from "./deadlines";

/** What a result's size counts: the body a caller reads back. */
type ResultBody = Pick<CallResult, "output" | "data" | "citations">;

/**
 * The result's size as UTF-8 JSON of its body, or undefined when it cannot be written as JSON
 * at all (nested deeper than JSON.stringify's stack allows: an upstream's hostile output).
 * The one rule for `resultBytes`, whoever builds the result.
 */
export function resultSize(body: ResultBody): number | undefined {
  try {
    return Buffer.byteLength(JSON.stringify(body) ?? "");
  } catch {
    return undefined;
  }
}

/** What a tool's run produced, before it is a stored result. */
export type Produced =
  | { ok: true; output: string; data: unknown; citations: CallResult["citations"] }
  | { ok: false; failure: Failure };

export interface RunFacts {
  cached: boolean;
  stale: boolean;
  fallback?: CallResult["fallback"];
  durationMs: number;
}

/**
 * The result of a call its tool ran. An output that cannot be stored as JSON fails the call
 * as `invalid_output` instead.
 */
export function ranResult(
  call: Pick<CallRecord, "scheduledAt">,
  produced: Produced,
  facts: RunFacts,
  now: Date,
): CallResult {
  if (!produced.ok) return failedResult(call, produced.failure, now, facts);
  const body = { output: produced.output, data: produced.data, citations: produced.citations };
  const bytes = resultSize(body);
  if (bytes === undefined) return unstorableResult(call, "it is nested too deeply", now, facts);
  return {
    status: "succeeded",
    ...body,
    ...runFields(facts),
    resultBytes: bytes,
    truncated: false,
    completedAt: completionTime(call.scheduledAt, now),
  };
}

/**
 * The one builder of a failed result: a tool's failure, a refusal (its run's policy, a
 * person, an expired approval), a stuck or never-run call, an output that cannot be stored.
 * The output is the failure's message; nothing else is kept.
 */
export function failedResult(
  call: Pick<CallRecord, "scheduledAt">,
  failure: Failure,
  now: Date,
  facts: Partial<RunFacts> = {},
  options: { truncated?: boolean } = {},
): CallResult {
  const body = { output: failure.message, data: null, citations: [] };
  return {
    status: "failed",
    ...body,
    failure,
    ...runFields({ cached: false, stale: false, durationMs: 0, ...facts }),
    resultBytes: resultSize(body) ?? 0,
    truncated: options.truncated ?? false,
    completedAt: completionTime(call.scheduledAt, now),
  };
}

/** A result whose output the store (or JSON) cannot take: failed as `invalid_output`. */
export function unstorableResult(
  call: Pick<CallRecord, "scheduledAt">,
  why: string,
  now: Date,
  facts: Partial<RunFacts> = {},
): CallResult {
  const failure = Failures.invalidOutput(`The tool's output could not be stored: ${why}.`);
  return failedResult(call, failure, now, facts, { truncated: true });
}

function runFields(facts: RunFacts) {
  return {
    cached: facts.cached,
    stale: facts.stale,
    ...(facts.fallback ? { fallback: facts.fallback } : {}),
    durationMs: facts.durationMs,
  };
}
