import * as z from "zod";
import { runBudget, runPolicy } from "../model/run";
import { callView } from "./calls";

/** A run's own limits (`PUT /v1/runs/{runId}/policy`), and each policy a run view shows. */
export const runPolicyBody = runPolicy.meta({ id: "RunPolicy" });

export const runPoliciesView = z
  .object({
    /** What the run works under: the tighter of the stage's and its own, limit by limit. */
    policy: runPolicyBody,
    runPolicy: runPolicyBody.nullable(),
    stagePolicy: runPolicyBody,
  })
  .meta({ id: "RunPolicies" });

/** A run as the platform governs it: its policies, what it used and has left, its calls. */
export const runView = runPoliciesView
  .extend({
    runId: z.string(),
    usage: z.object({
      calls: z.number().int(),
      cost: z.number(),
      firstCallAt: z.string().nullable(),
      perTool: z.record(z.string(), z.number().int()),
    }),
    remaining: runBudget,
    /** The run's calls by status. */
    calls: z.record(z.string(), z.number().int()),
  })
  .meta({ id: "Run" });

/** The optional body of approving or denying a call. */
export const approvalDecisionBody = z
  .strictObject({ reason: z.string().min(1).max(1000).optional() })
  .meta({ id: "ApprovalDecision" });

export const approvalsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

/** `GET /v1/approvals`: calls awaiting a person's decision, the soonest to expire first. */
export const approvalsView = z.object({ calls: z.array(callView) });
