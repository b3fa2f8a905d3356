import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { toolSearchBody, toolSearchQuery, toolSearchView } from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

const SEARCH_PATH = "/v1/tools/search";

const description =
  "Ranked tools for a need in words: BM25F over each tool's id, title, description, usage hint, guidelines, examples, toolset and input (property names and descriptions), with stemming, typo tolerance and the words tools use for the same thing. Only tools the selection offers (mode, role, enabled, capabilities, allow / deny, as `/v1/select` judges them) can be found, so every result can be called. With `explain`, each result says which words of the query it matched and where; an administrator also gets the matching tools selection left out, with its reasons (`excluded`).";

/**
 * `/v1/tools/search`. Registered before `/v1/tools/{id}`: a tool whose id is `search` (remote
 * MCP servers often have one) is read through its toolset or the list, not by that path.
 */
export function registerSearchRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const read = requirePermission(deps.config, "read");
  const { search } = deps;
  const responses = {
    200: jsonContent(toolSearchView, "The tools found, best first"),
    ...errorResponses(400, 401, 403),
  };

  app.openapi(
    createRoute({
      method: "get",
      path: SEARCH_PATH,
      tags: ["Selection"],
      summary: "Search the tools you can call",
      description,
      security: bearerSecurity,
      middleware: [read] as const,
      request: { query: toolSearchQuery },
      responses,
    }),
    async (c) => {
      const { q, explain, ...rest } = c.req.valid("query");
      const request = { query: q, ...rest, ...(explain === "true" ? { explain: true } : {}) };
      return c.json(await search.search(c.get("principal"), request), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: SEARCH_PATH,
      tags: ["Selection"],
      summary: "Search the tools you can call, with the selection's fields",
      description,
      security: bearerSecurity,
      middleware: [read] as const,
      request: {
        body: { required: true, content: { "application/json": { schema: toolSearchBody } } },
      },
      responses: { ...responses, ...errorResponses(413, 415) },
    }),
    async (c) => {
      const { q, ...rest } = c.req.valid("json");
      return c.json(await search.search(c.get("principal"), { query: q, ...rest }), 200);
    },
  );
}
