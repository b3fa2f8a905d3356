import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  type RenderedPrompt,
  renderPrompt,
  renderSearchPrompt,
} from "@toolbus/core/app/selection/prompt";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { promptBody, promptView, selectBody, selectionView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

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
        body: { required: false, content: { "application/json": { schema: selectBody } } },
      },
      responses: {
        200: jsonContent(selectionView, "The selection"),
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
          needsConnection: selection.needsConnection,
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
        body: { required: false, content: { "application/json": { schema: promptBody } } },
      },
      responses: {
        200: {
          description: "The section (text/markdown), or it with its parts (format json)",
          content: {
            "text/markdown": { schema: z.string() },
            "application/json": { schema: promptView },
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
