import * as z from "zod";
import { toolId } from "../model/ids";
import {
  catalogDiff,
  MAX_REGISTERED_TOOLS,
  toolsetRegistration,
  toolUpdates,
} from "../model/registered";
import { toolsetView, toolView } from "./catalog";

// Registered toolsets: http endpoints and remote MCP servers added over the API.

export const registeredToolsetBody = toolsetRegistration.meta({
  id: "ToolsetRegistration",
  description:
    "An http toolset (its tools, each a method and URL template with JSON Schemas) or an mcp toolset (a remote MCP server whose tools are discovered). Secrets are named, never given.",
});

export const catalogDiffView = catalogDiff.meta({ id: "CatalogDiff" });

/** What a registration or refresh stored: the toolset, exactly its tools, and the diff. */
/** Tool ids with a change held for review, by kind. */
export const heldSummaryView = z
  .object({
    added: z.array(z.string()),
    changed: z.array(z.string()),
    removed: z.array(z.string()),
  })
  .meta({ id: "HeldSummary" });

export const registrationOutcomeView = z
  .object({
    toolset: toolsetView,
    tools: z.array(toolView),
    diff: catalogDiffView,
    // A default, so a client reading an answer of a server from before pinning still parses it.
    held: heldSummaryView.default({ added: [], changed: [], removed: [] }).meta({
      description:
        "Changes the server made that wait for review (pending only): the tools listed here are served as pinned until an administrator accepts.",
    }),
  })
  .meta({ id: "RegistrationOutcome" });

const fieldChangeView = z
  .object({
    path: z.string().meta({ description: "A JSON Pointer into the definition" }),
    before: z.unknown().optional(),
    after: z.unknown().optional(),
  })
  .meta({ id: "DefinitionFieldChange" });

export const heldChangeView = z
  .object({
    id: z
      .string()
      .meta({ description: "The tool's id here (for an added tool, the id it would get)" }),
    remoteName: z.string(),
    change: z.enum(["added", "changed", "removed"]),
    state: z.enum(["pending", "rejected"]),
    detectedAt: z.string(),
    fields: z.array(fieldChangeView).meta({
      description:
        "From the pinned definition to what the server declares, field by field (name, title, description, annotations, inputSchema, outputSchema)",
    }),
    truncated: z.boolean().meta({ description: "More fields differ than are listed" }),
  })
  .meta({ id: "HeldToolChange" });

export const toolsetReviewView = z
  .object({
    toolset: z.string(),
    updates: toolUpdates,
    revision: z.number().int().meta({ description: "The toolset's revision: send it as If-Match" }),
    pending: z.array(heldChangeView),
    rejected: z.array(heldChangeView),
  })
  .meta({ id: "ToolsetReview" });

export const reviewDecisionBody = z
  .object({
    tools: z
      .array(toolId)
      .min(1)
      .max(2 * MAX_REGISTERED_TOOLS)
      .optional()
      .meta({ description: "Ids of the pending changes to decide; absent: all of them" }),
  })
  .strict()
  .meta({ id: "ReviewDecision" });

export const reviewDecisionView = z
  .object({
    decided: z.array(z.string()).meta({ description: "Ids of the changes decided" }),
    review: toolsetReviewView,
  })
  .meta({ id: "ReviewDecisionOutcome" });

export const refreshBody = z
  .object({
    renames: z
      .record(z.string().min(1).max(128), toolId)
      .optional()
      .meta({ description: "Remote tool name -> id here, merged into the stored renames." }),
  })
  .strict()
  .meta({ id: "RefreshRequest" });

/** The ids of the tools that left the catalog with the toolset. */
export const removedToolsetView = z.object({ removed: z.array(z.string()) });
