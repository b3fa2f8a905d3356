import * as z from "zod";
import { toolsetName } from "../model/ids";
import { availability, category, toolSpec, toolsetSpec } from "../model/tool";

// The catalog as the API shows it: what is stored, plus the revision every write increments.

const versioned = {
  revision: z.number().int().positive().meta({ description: "Incremented on every write." }),
  updatedAt: z.string(),
};

export const toolView = toolSpec.extend(versioned).meta({ id: "Tool" });

/** A tool in `GET /v1/tools`: whether it is in the caller's selection, and if not, why. */
export const toolListItemView = toolView
  .extend({
    available: z.boolean().meta({
      description:
        "In your selection for the requested (or default) mode: enabled, offered in the mode, open to your role, and its capabilities present, or only capabilities missing and its fallback able to serve (`servedBy`).",
    }),
    reasons: z
      .array(z.string())
      .optional()
      .meta({
        description:
          "When not available, why: disabled, mode, role, capability:<name>. When served by its fallback, the capabilities it lacks.",
        example: ["capability:github_token"],
      }),
    servedBy: z.string().optional().meta({
      description:
        "Set when the tool lacks capabilities but is available because its fallback (this tool) answers its calls.",
      example: "static_links",
    }),
    needsConnection: z
      .object({ provider: z.string(), scopes: z.array(z.string()) })
      .optional()
      .meta({
        description:
          "Set when the tool acts as you at a provider you have not connected (or whose connection expired): calls fail with connection_required until you connect.",
        example: { provider: "github", scopes: ["repo"] },
      }),
    fallbackReasons: z
      .array(z.string())
      .optional()
      .meta({
        description:
          "Set when the tool lacks only capabilities and its fallback cannot serve either: why not (capability:<fallback> when it has nothing to serve on this stage).",
        example: ["capability:static_links"],
      }),
  })
  .meta({ id: "ToolListItem" });
export const toolListView = z.object({ tools: z.array(toolListItemView) });

export const toolsQuery = z.object({
  category: category.optional(),
  toolset: toolsetName.optional(),
  mode: z.string().min(1).max(64).optional(),
  available: z.enum(["true", "false"]).optional(),
});

/**
 * A write takes the spec and nothing unknown. The revision and time a read returned may come
 * back in a read-modify-write and are ignored: If-Match is what carries the revision.
 */
const readBack = {
  revision: z.number().optional().meta({ description: "Ignored; send If-Match instead." }),
  updatedAt: z.string().optional().meta({ description: "Ignored." }),
};
export const toolBody = toolSpec.extend(readBack).strict().meta({ id: "ToolInput" });

export const toolsetView = toolsetSpec.extend(versioned).meta({ id: "Toolset" });
export const toolsetListView = z.object({ toolsets: z.array(toolsetView) });
export const toolsetWithToolsView = toolsetView
  .extend({ tools: z.array(toolView) })
  .meta({ id: "ToolsetWithTools" });
export const toolsetBody = toolsetSpec.extend(readBack).strict().meta({ id: "ToolsetInput" });

/**
 * `PUT /v1/tools/{id}/availability`: the tool's whole availability, replaced. Absent fields
 * mean what they mean in a spec: `enabled` true, every mode, every role.
 */
export const toolAvailabilityBody = availability.strict().meta({ id: "ToolAvailabilityInput" });
export type ToolAvailabilityBody = z.infer<typeof toolAvailabilityBody>;
