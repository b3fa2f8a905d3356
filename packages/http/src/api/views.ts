import { ValidationError } from "@toolbus/core/errors";
import type { ApiKeyRecord } from "@toolbus/core/ports";
import type { Approval, CallRecord, Principal } from "@toolbus/wire/model/call";

/** A principal as callers see it: its optional fields only when it has them. */
export function principalView(principal: Principal): Principal {
  const { id, role, issuer, subject, actingKeyId } = principal;
  return {
    id,
    role,
    ...(issuer !== undefined ? { issuer } : {}),
    ...(subject !== undefined ? { subject } : {}),
    ...(actingKeyId !== undefined ? { actingKeyId } : {}),
  };
}

/**
 * What a caller sees of a call: the input hash, tool version and bookkeeping attributes stay
 * inside, and the requester is only its principal: id and role, and for a signed-in person
 * the issuer and subject its id derives from (for an end user a key acts for, that key).
 */
export function callView(call: CallRecord) {
  const result = call.result;
  return {
    parentRunId: call.parentRunId,
    callId: call.callId,
    toolId: call.toolId,
    toolset: call.toolset,
    status: call.status,
    ...(call.mode ? { mode: call.mode } : {}),
    ...(call.parentCallId ? { parentCallId: call.parentCallId } : {}),
    requestedBy: principalView(call.requestedBy),
    scheduledAt: call.scheduledAt,
    ...(call.startedAt ? { startedAt: call.startedAt } : {}),
    ...(call.trace ? { traceId: call.trace.traceId } : {}),
    ...(call.budget ? { budget: call.budget } : {}),
    ...(call.approval ? { approval: approvalView(call.approval) } : {}),
    ...(call.progress ? { progress: call.progress } : {}),
    ...(call.cancelRequestedAt ? { cancelRequestedAt: call.cancelRequestedAt } : {}),
    ...(result
      ? {
          result: {
            output: result.output,
            data: result.data,
            ...(result.content ? { content: result.content } : {}),
            citations: result.citations,
            ...(result.failure ? { failure: result.failure } : {}),
            cached: result.cached,
            stale: result.stale,
            durationMs: result.durationMs,
            resultBytes: result.resultBytes,
            truncated: result.truncated,
            completedAt: result.completedAt,
            ...(result.fallback ? { fallback: result.fallback } : {}),
          },
        }
      : {}),
  };
}

/**
 * A call's approval as callers see it: when it was asked for and until when it waits, and once
 * decided, by whom (principalView), when and why.
 */
function approvalView(approval: Approval) {
  const { decision } = approval;
  return {
    requestedAt: approval.requestedAt,
    expiresAt: approval.expiresAt,
    ...(decision
      ? {
          decision: {
            approved: decision.approved,
            ...(decision.by ? { by: principalView(decision.by) } : {}),
            at: decision.at,
            ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
          },
        }
      : {}),
  };
}

/** Only the public fields, whatever else a store keeps beside them. */
export function keyView(record: ApiKeyRecord) {
  return {
    keyId: record.keyId,
    name: record.name,
    role: record.role,
    createdAt: record.createdAt,
    ...(record.revokedAt ? { revokedAt: record.revokedAt } : {}),
    ...(record.lastUsedAt ? { lastUsedAt: record.lastUsedAt } : {}),
    ...(record.actsFor ? { actsFor: true } : {}),
  };
}

export function etag(stored: { revision: number }): string {
  return `"${stored.revision}"`;
}

/**
 * The revision an `If-Match` names: `"3"`, `W/"3"` or a bare `3`. `*` (any current version)
 * and an absent header mean no check.
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === "*") return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(header);
  if (!match?.[1]) {
    throw new ValidationError('If-Match must be a revision from an ETag, e.g. "3".', {
      details: [{ path: "if-match", message: 'Expected a revision such as "3".' }],
    });
  }
  const revision = Number(match[1]);
  if (revision < 1) {
    throw new ValidationError("If-Match must name a revision of 1 or more.", {
      details: [{ path: "if-match", message: "Revisions start at 1." }],
    });
  }
  return revision;
}
