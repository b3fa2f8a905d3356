import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { type RenderedPrompt, renderPrompt, renderSearchPrompt } from "../../app/selection/prompt";
import { requirePermission } from "../../http/auth";
import type { HttpEnv } from "../../http/env";
import { category } from "../../model/tool";
import type { ApiDeps } from "../deps";
import { bearerSecurity, errorResponses, jsonContent, selectionFields } from "../schemas";

const selectRequestSchema = z.object(selectionFields).strict().openapi("SelectRequest");

const selectionSchema = z
  .object({
    mode: z.string(),
    role: z.string(),
    tools: z.array(z.string()).openapi({
      description:
        "Available tool ids, by category (research, reference, enhance, publish, utility), then id.",
    }),
    excluded: z.array(
      z.object({
        tool: z.string(),
        reasons: z.array(z.string()).openapi({
          description:
            "All that apply, in this order: disabled, mode, role, capability:<name>, denied, not_allowed.",
          example: ["capability:github_token"],
        }),
        fallbackReasons: z
          .array(z.string())
          .optional()
          .openapi({
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
          fallback: z.string().openapi({ description: "The tool that answers in its place." }),
          reasons: z.array(z.string()).openapi({
            description: "Why the tool cannot answer itself: the capabilities it lacks.",
            example: ["capability:network"],
          }),
        }),
      )
      .openapi({
        description:
          "Tools in `tools` that lack capabilities but are offered because their fallback can serve: their calls are answered by the fallback (the result's `fallback` says so).",
      }),
  })
  .openapi("Selection");

const promptRequestSchema = z
  .object({
    ...selectionFields,
    style: z.enum(["list", "search"]).optional().openapi({
      description:
        "list (default): every selected optional tool; search: the two tools of the MCP search surface (`/mcp?surface=search`), the same bytes whatever the catalog holds.",
    }),
    format: z.enum(["markdown", "json"]).optional().openapi({
      description: "markdown (default): the section itself; json: the section with its parts.",
    }),
    budgetBytes: z.number().int().min(0).max(10_000_000).optional().openapi({
      description:
        "Largest size of the Markdown in UTF-8 bytes. Over it, guidelines are dropped first, then examples; tools never are.",
    }),
  })
  .strict()
  .openapi("PromptRequest");

const droppedSchema = z.object({
  guidelines: z.array(z.string()).openapi({ description: "Tool ids, in the order dropped." }),
  examples: z.array(z.string()).openapi({ description: "Tool ids, in the order dropped." }),
});

const promptToolSchema = z.object({
  id: z.string(),
  title: z.string(),
  category,
  description: z.string(),
  whenToUse: z.string(),
  guidelines: z.object({ do: z.array(z.string()), dont: z.array(z.string()) }),
  examples: z.array(z.object({ title: z.string(), input: z.unknown() })),
});

const promptSchema = z
  .object({
    markdown: z.string(),
    tools: z.array(promptToolSchema),
    dropped: droppedSchema,
    bytes: z.number().int(),
    overBudget: z.boolean(),
  })
  .openapi("Prompt");

export function registerSelectionRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { config } = deps;
  const read = requirePermission(config, "read");
  const selector = deps.selection;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/select",
      tags: ["Selection"],
      summary: "Which tools a role may and can use in a mode, and why the others are left out",
      description:
        "Judges every catalog tool by whether it is enabled, offered in the mode, open to the role, has the capabilities it needs, and the request's allow / deny lists. A tool that lacks only capabilities is still offered when its fallback can serve (listed in `servedByFallback`), and otherwise left out with `fallbackReasons` saying why its fallback cannot. An empty body selects for your own role in the default mode.",
      security: bearerSecurity,
      middleware: [read] as const,
      request: {
        body: { required: false, content: { "application/json": { schema: selectRequestSchema } } },
      },
      responses: {
        200: jsonContent(selectionSchema, "The selection"),
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const { role, selection } = await selector.select(c.get("principal"), body);
      return c.json(
        {
          mode: selection.mode,
          role,
          tools: selection.available.map((tool) => tool.id),
          excluded: selection.excluded,
          servedByFallback: selection.servedByFallback,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/prompt",
      tags: ["Selection"],
      summary: "The optional-tools section of an agent's prompt",
      description:
        "Markdown of the selected optional tools by category, each with its description, when to use it, do / don't guidelines and examples. The same catalog and request give byte-identical output, so it can be prompt-cached. `X-Toolbus-Dropped` says what a budget dropped (`none`, or e.g. `guidelines=web_search,calendar; examples=calendar`); `X-Toolbus-Over-Budget: true` when even that was not enough.",
      security: bearerSecurity,
      middleware: [read] as const,
      request: {
        body: { required: false, content: { "application/json": { schema: promptRequestSchema } } },
      },
      responses: {
        200: {
          description: "The section (text/markdown), or it with its parts (format json)",
          content: {
            "text/markdown": { schema: z.string() },
            "application/json": { schema: promptSchema },
          },
        },
        ...errorResponses(400, 401, 403, 413, 415),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const { style, format, budgetBytes, ...selecting } = body;
      // Selected even for the search style: a bad mode or role is the same 400 / 403.
      const { selection } = await selector.select(c.get("principal"), selecting);
      const options = budgetBytes === undefined ? {} : { budgetBytes };
      const prompt =
        style === "search" ? renderSearchPrompt(options) : renderPrompt(selection, options);
      if (format === "json") {
        const { markdown, json, dropped, bytes, overBudget } = prompt;
        return c.json({ markdown, tools: json.tools, dropped, bytes, overBudget }, 200);
      }
      return c.body(prompt.markdown, 200, {
        "Content-Type": "text/markdown; charset=utf-8",
        "X-Toolbus-Dropped": droppedHeader(prompt.dropped),
        ...(prompt.overBudget ? { "X-Toolbus-Over-Budget": "true" } : {}),
      });
    },
  );
}

function droppedHeader(dropped: RenderedPrompt["dropped"]): string {
  const parts = (["guidelines", "examples"] as const)
    .filter((what) => dropped[what].length > 0)
    .map((what) => `${what}=${dropped[what].join(",")}`);
  return parts.length > 0 ? parts.join("; ") : "none";
}
