import * as z from "zod";
import { toolId } from "../model/ids";
import { category } from "../model/tool";

/** More ids than any catalog holds: a bound on the work one request can ask for. */
const MAX_LIST = 1000;

/** What every selecting request may say: the mode, the role, and allow / deny lists. */
export const selectionFields = {
  mode: z.string().min(1).max(64).nullable().optional().meta({
    description: "Workflow mode; absent or null means the stage's default mode.",
  }),
  role: z.string().min(1).max(64).optional().meta({
    description: "Select as this role (default: your own). It may not be above your own role.",
  }),
  allow: z.array(toolId).max(MAX_LIST).optional().meta({
    description: "Only these tool ids may be selected.",
  }),
  deny: z.array(toolId).max(MAX_LIST).optional().meta({
    description: "These tool ids are never selected.",
  }),
};

export const selectBody = z.object(selectionFields).strict().meta({ id: "SelectRequest" });

/** Which tools a role may and can use in a mode, and why the others are left out. */
export const selectionView = z
  .object({
    mode: z.string(),
    role: z.string(),
    tools: z.array(z.string()).meta({
      description:
        "Available tool ids, by category (research, reference, enhance, publish, utility), then id.",
    }),
    excluded: z.array(
      z.object({
        tool: z.string(),
        reasons: z.array(z.string()).meta({
          description:
            "All that apply, in this order: disabled, mode, role, capability:<name>, denied, not_allowed.",
          example: ["capability:github_token"],
        }),
        fallbackReasons: z
          .array(z.string())
          .optional()
          .meta({
            description:
              "Set when the tool lacks only capabilities and its fallback cannot serve in its place either: the fallback's own reasons, and capability:<fallback> when it has nothing to serve on this stage (GET /v1/capabilities says why).",
            example: ["capability:static_links"],
          }),
      }),
    ),
    servedByFallback: z
      .array(
        z.object({
          tool: z.string(),
          fallback: z.string().meta({ description: "The tool that answers in its place." }),
          reasons: z.array(z.string()).meta({
            description: "Why the tool cannot answer itself: the capabilities it lacks.",
            example: ["capability:network"],
          }),
        }),
      )
      .meta({
        description:
          "Tools in `tools` that lack capabilities but are offered because their fallback can serve: their calls are answered by the fallback (the result's `fallback` says so).",
      }),
    needsConnection: z
      .array(
        z.object({
          tool: z.string(),
          provider: z.string().meta({ example: "github" }),
          scopes: z.array(z.string()),
        }),
      )
      .meta({
        description:
          "Tools in `tools` that act as you at a provider you have not connected (or whose connection expired): a call fails with connection_required and a link to connect; POST /v1/connections/{provider} gives one now.",
      }),
  })
  .meta({ id: "Selection" });

export const promptBody = z
  .object({
    ...selectionFields,
    style: z.enum(["list", "search"]).optional().meta({
      description:
        "list (default): every selected optional tool; search: the two tools of the MCP search surface (`/mcp?surface=search`), the same bytes whatever the catalog holds.",
    }),
    format: z.enum(["markdown", "json"]).optional().meta({
      description: "markdown (default): the section itself; json: the section with its parts.",
    }),
    budgetBytes: z.number().int().min(0).max(10_000_000).optional().meta({
      description:
        "Largest size of the Markdown in UTF-8 bytes. Over it, guidelines are dropped first, then examples; tools never are.",
    }),
  })
  .strict()
  .meta({ id: "PromptRequest" });

/** One tool of the prompt section, as `format: "json"` gives it. */
export const promptToolView = z.object({
  id: z.string(),
  title: z.string(),
  category,
  description: z.string(),
  whenToUse: z.string(),
  guidelines: z.object({ do: z.array(z.string()), dont: z.array(z.string()) }),
  examples: z.array(z.object({ title: z.string(), input: z.unknown() })),
});

/** The prompt section with its parts (`POST /v1/prompt` with `format: "json"`). */
export const promptView = z
  .object({
    markdown: z.string(),
    tools: z.array(promptToolView),
    dropped: z.object({
      guidelines: z.array(z.string()).meta({ description: "Tool ids, in the order dropped." }),
      examples: z.array(z.string()).meta({ description: "Tool ids, in the order dropped." }),
    }),
    bytes: z.number().int(),
    overBudget: z.boolean(),
  })
  .meta({ id: "Prompt" });
