import * as z from "zod";
import { toolId } from "../model/ids";
import { catalogDiff, toolsetRegistration } from "../model/registered";
import { toolsetView, toolView } from "./catalog";

// Registered toolsets: http endpoints and remote MCP servers added over the API.

export const registeredToolsetBody = toolsetRegistration.meta({
  id: "ToolsetRegistration",
  description:
    "An http toolset (its tools, each a method and URL template with JSON Schemas) or an mcp toolset (a remote MCP server whose tools are discovered). Secrets are named, never given.",
});

export const catalogDiffView = catalogDiff.meta({ id: "CatalogDiff" });

/** What a registration or refresh stored: the toolset, exactly its tools, and the diff. */
export const registrationOutcomeView = z
  .object({ toolset: toolsetView, tools: z.array(toolView), diff: catalogDiffView })
  .meta({ id: "RegistrationOutcome" });

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
