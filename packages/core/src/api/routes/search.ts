import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { SEARCH_FIELDS } from "../../app/search/fields";
import {
  DEFAULT_SEARCH_LIMIT,
  MAX_SEARCH_LIMIT,
  searchLimit,
  searchQuery,
} from "../../app/search/service";
import { requirePermission } from "../../http/auth";
import type { HttpEnv } from "../../http/env";
import { category, jsonSchema } from "../../model/tool";
import type { ApiDeps } from "../deps";
import { bearerSecurity, errorResponses, jsonContent, selectionFields } from "../schemas";

const SEARCH_PATH = "/v1/tools/search";

const limitDescription = `How many tools at most (1-${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}).`;
const queryDescription = "What the agent needs, in words (1-500 characters).";

const searchGetQuery = z.object({
  q: searchQuery.meta({ description: queryDescription, example: "refund a payment" }),
  limit: z.coerce.number().pipe(searchLimit).optional().meta({ description: limitDescription }),
  mode: selectionFields.mode,
  role: selectionFields.role,
});

const searchBody = z
  .object({
    q: searchQuery.meta({ description: queryDescription }),
    limit: searchLimit.optional().meta({ description: limitDescription }),
    ...selectionFields,
  })
  .strict()
  .openapi("ToolSearchRequest");

const foundToolSchema = z.object({
  id: z.string(),
  title: z.string(),
  toolset: z.string(),
  category,
  description: z.string(),
  usageHint: z.string(),
  inputSchema: jsonSchema,
  score: z.number().openapi({ description: "BM25 over the weighted fields; higher is better." }),
  matched: z.array(z.enum(SEARCH_FIELDS)).openapi({
    description: "The fields a word of the query was found in.",
  }),
});

const toolSearchSchema = z
  .object({
    query: z.string(),
    mode: z.string(),
    role: z.string(),
    catalogVersion: z.string().openapi({ description: "The catalog state that was searched." }),
    tools: z.array(foundToolSchema).openapi({ description: "Best first." }),
  })
  .openapi("ToolSearch");

const description =
  "Ranked tools for a need in words: BM25 over each tool's id, title, description, usage hint, guidelines, examples and toolset, with stemming and typo tolerance. Only tools the selection offers (mode, role, enabled, capabilities, allow / deny, as `/v1/select` judges them) can be found, so every result can be called.";

/**
 * `/v1/tools/search`. Registered before `/v1/tools/{id}`: a tool whose id is `search` (remote
 * MCP servers often have one) is read through its toolset or the list, not by that path.
 */
export function registerSearchRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const read = requirePermission(deps.config, "read");
  const { search } = deps;
  const responses = {
    200: jsonContent(toolSearchSchema, "The tools found, best first"),
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
      request: { query: searchGetQuery },
      responses,
    }),
    async (c) => {
      const { q, ...rest } = c.req.valid("query");
      return c.json(await search.search(c.get("principal"), { query: q, ...rest }), 200);
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
        body: { required: true, content: { "application/json": { schema: searchBody } } },
      },
      responses: { ...responses, ...errorResponses(413, 415) },
    }),
    async (c) => {
      const { q, ...rest } = c.req.valid("json");
      return c.json(await search.search(c.get("principal"), { query: q, ...rest }), 200);
    },
  );
}
