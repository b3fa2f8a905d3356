import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { CatalogService } from "@toolbus/core/app/catalog/service";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { NotFoundError, ValidationError } from "@toolbus/core/errors";
import {
  toolAvailabilityBody,
  toolBody,
  toolListView,
  toolsetBody,
  toolsetListView,
  toolsetView,
  toolsetWithToolsView,
  toolsQuery,
  toolView,
} from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import {
  bearerSecurity,
  errorResponses,
  ifMatchHeaders,
  jsonContent,
  toolIdParam,
  toolsetNameParam,
} from "../schemas";
import { etag, parseIfMatch } from "../views";

const toolParams = z.object({ id: toolIdParam });
const toolsetParams = z.object({ name: toolsetNameParam });

export function registerCatalogRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { catalog, config } = deps;
  const read = requirePermission(config, "read");
  const admin = requirePermission(config, "admin");
  const selector = deps.selection;
  const writes = new CatalogService(deps);

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/tools",
      tags: ["Catalog"],
      summary: "List tools",
      description:
        "Filters combine. `mode` keeps tools offered in that mode and is the mode `available` is judged in (default: the stage's default mode).",
      security: bearerSecurity,
      middleware: [read] as const,
      request: { query: toolsQuery },
      responses: {
        200: jsonContent(toolListView, "The tools"),
        ...errorResponses(400, 401, 403),
      },
    }),
    async (c) => {
      const query = c.req.valid("query");
      // Availability is the caller's own selection: role and capabilities count too.
      const {
        tools,
        selection: { excluded, servedByFallback, needsConnection },
      } = await selector.select(c.get("principal"), {
        mode: query.mode,
        filter: {
          ...(query.toolset ? { toolset: query.toolset } : {}),
          ...(query.category ? { category: query.category } : {}),
        },
      });
      const left = new Map(excluded.map((entry) => [entry.tool, entry]));
      const served = new Map(servedByFallback.map((entry) => [entry.tool, entry]));
      const needs = new Map(needsConnection.map((entry) => [entry.tool, entry]));
      const wanted = query.available === undefined ? undefined : query.available === "true";
      const items = tools
        .filter((tool) => query.mode === undefined || !left.get(tool.id)?.reasons.includes("mode"))
        .map((tool) => {
          const out = left.get(tool.id);
          if (out) {
            const { reasons, fallbackReasons } = out;
            return {
              ...tool,
              available: false,
              reasons,
              ...(fallbackReasons ? { fallbackReasons } : {}),
            };
          }
          const by = served.get(tool.id);
          const need = needs.get(tool.id);
          // Offered, but answered by its fallback (what it lacks, and who answers), or only
          // once the caller connects its provider.
          return {
            ...tool,
            available: true,
            ...(by ? { reasons: by.reasons, servedBy: by.fallback } : {}),
            ...(need ? { needsConnection: { provider: need.provider, scopes: need.scopes } } : {}),
          };
        })
        .filter((tool) => wanted === undefined || tool.available === wanted);
      return c.json({ tools: items }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/tools/{id}",
      tags: ["Catalog"],
      summary: "Get a tool",
      security: bearerSecurity,
      middleware: [read] as const,
      request: { params: toolParams },
      responses: {
        200: jsonContent(toolView, "The tool; ETag is its revision"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const tool = await catalog.getTool(id);
      if (!tool) throw new NotFoundError(`Tool ${id} does not exist.`);
      c.header("ETag", etag(tool));
      return c.json(tool, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/toolsets",
      tags: ["Catalog"],
      summary: "List toolsets",
      security: bearerSecurity,
      middleware: [read] as const,
      responses: {
        200: jsonContent(toolsetListView, "The toolsets"),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => {
      const { toolsets } = await catalog.list();
      return c.json({ toolsets }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/toolsets/{name}",
      tags: ["Catalog"],
      summary: "Get a toolset with its tools",
      security: bearerSecurity,
      middleware: [read] as const,
      request: { params: toolsetParams },
      responses: {
        200: jsonContent(toolsetWithToolsView, "The toolset; ETag is its revision"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const { toolsets, tools } = await catalog.list({ toolset: name });
      const toolset = toolsets.find((t) => t.name === name);
      if (!toolset) throw new NotFoundError(`Toolset ${name} does not exist.`);
      c.header("ETag", etag(toolset));
      return c.json({ ...toolset, tools }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/toolsets/{name}",
      tags: ["Catalog admin"],
      summary: "Register or replace a toolset",
      description:
        "The name in the path must equal the body's; another owner's toolset of that name is a conflict. Send If-Match to update only the revision you read.",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: {
        params: toolsetParams,
        headers: ifMatchHeaders,
        body: { required: true, content: { "application/json": { schema: toolsetBody } } },
      },
      responses: {
        200: jsonContent(toolsetView, "Replaced"),
        201: jsonContent(toolsetView, "Created"),
        ...errorResponses(400, 401, 403, 409, 413, 415),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const spec = c.req.valid("json");
      if (spec.name !== name) throw pathMismatch("name", name, spec.name);
      const expected = parseIfMatch(c.req.valid("header")["if-match"]);
      const stored = await writes.putToolset(spec, expected);
      c.set("audited", { kind: "toolset", id: stored.name });
      c.header("ETag", etag(stored));
      if (stored.revision === 1) {
        c.header("Location", `/v1/toolsets/${stored.name}`);
        return c.json(stored, 201);
      }
      return c.json(stored, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/tools/{id}",
      tags: ["Catalog admin"],
      summary: "Register or replace a tool",
      description:
        "The id in the path must equal the body's and its toolset must exist. Send If-Match to update only the revision you read.",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: {
        params: toolParams,
        headers: ifMatchHeaders,
        body: { required: true, content: { "application/json": { schema: toolBody } } },
      },
      responses: {
        200: jsonContent(toolView, "Replaced"),
        201: jsonContent(toolView, "Created"),
        ...errorResponses(400, 401, 403, 409, 413, 415),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const spec = c.req.valid("json");
      if (spec.id !== id) throw pathMismatch("id", id, spec.id);
      const expected = parseIfMatch(c.req.valid("header")["if-match"]);
      const stored = await writes.putTool(spec, expected);
      c.set("audited", { kind: "tool", id: stored.id, toolset: stored.toolset });
      c.header("ETag", etag(stored));
      if (stored.revision === 1) {
        c.header("Location", `/v1/tools/${stored.id}`);
        return c.json(stored, 201);
      }
      return c.json(stored, 200);
    },
  );

  for (const action of ["enable", "disable"] as const) {
    app.openapi(
      createRoute({
        method: "post",
        path: `/v1/tools/{id}/${action}`,
        tags: ["Catalog admin"],
        summary:
          action === "enable" ? "Enable a tool on this stage" : "Disable a tool on this stage",
        security: bearerSecurity,
        middleware: [admin] as const,
        request: { params: toolParams, headers: ifMatchHeaders },
        responses: {
          200: jsonContent(toolView, "The tool after the change"),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const expected = parseIfMatch(c.req.valid("header")["if-match"]);
        const stored = await writes.setEnabled(id, action === "enable", expected);
        c.set("audited", { kind: "tool", id: stored.id, toolset: stored.toolset });
        c.header("ETag", etag(stored));
        return c.json(stored, 200);
      },
    );
  }

  app.openapi(
    createRoute({
      method: "put",
      path: "/v1/tools/{id}/availability",
      tags: ["Catalog admin"],
      summary: "Set who may use a tool",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: {
        params: toolParams,
        headers: ifMatchHeaders,
        body: { required: true, content: { "application/json": { schema: toolAvailabilityBody } } },
      },
      responses: {
        200: jsonContent(toolView, "The tool after the change"),
        ...errorResponses(400, 401, 403, 404, 409, 413, 415),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const availability = c.req.valid("json");
      const expected = parseIfMatch(c.req.valid("header")["if-match"]);
      const stored = await writes.setAvailability(id, availability, expected);
      c.set("audited", { kind: "tool", id: stored.id, toolset: stored.toolset });
      c.header("ETag", etag(stored));
      return c.json(stored, 200);
    },
  );
}

function pathMismatch(field: string, inPath: string, inBody: string): ValidationError {
  return new ValidationError(
    `The ${field} in the path (${inPath}) and in the body (${inBody}) differ.`,
    {
      details: [{ path: field, message: `Must equal the path's ${field}, ${inPath}.` }],
    },
  );
}
