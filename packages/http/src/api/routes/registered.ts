import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { ValidationError } from "@toolbus/core/errors";
import { REGISTERED_SECRET_PREFIX } from "@toolbus/wire/model/registered-secret";
import {
  refreshBody,
  registeredToolsetBody,
  registrationOutcomeView,
  removedToolsetView,
  reviewDecisionBody,
  reviewDecisionView,
  toolsetReviewView,
} from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { AuditedObject, HttpEnv } from "../../common/env";
import {
  bearerSecurity,
  errorResponses,
  ifMatchHeaders,
  jsonContent,
  toolsetNameParam,
} from "../schemas";
import { etag, parseIfMatch } from "../views";

const params = z.object({ name: toolsetNameParam });

/** Where registered toolsets live: the one name code, URLs and functions use for them. */
export const REGISTERED_TOOLSETS_PATH = "/v1/registered-toolsets";

/**
 * The collection's former name. It answers exactly as the current one, so clients and scripts
 * written against it keep working, but the API document shows only the current name.
 */
export const FORMER_REGISTERED_TOOLSETS_PATH = "/v1/external-toolsets";

/** Registered toolsets: http endpoints and remote MCP servers, added without a deploy. */
export function registerRegisteredToolsetRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  for (const base of [REGISTERED_TOOLSETS_PATH, FORMER_REGISTERED_TOOLSETS_PATH]) {
    registerAt(app, deps, base, base === FORMER_REGISTERED_TOOLSETS_PATH);
  }
}

function registerAt(app: OpenAPIHono<HttpEnv>, deps: ApiDeps, base: string, hide: boolean): void {
  const { registered } = deps;
  if (!registered) return;
  const admin = requirePermission(deps.config, "admin");

  app.openapi(
    createRoute({
      hide,
      method: "put",
      path: `${base}/{name}`,
      tags: ["Catalog admin"],
      summary: "Register or replace an http or mcp toolset",
      description: `Checks everything before writing: owner, ids (a clash names both owners), JSON Schemas, URL templates, the SSRF guard on every URL, that each named secret starts with ${REGISTERED_SECRET_PREFIX} (the stage's other secrets belong to Toolbus and its built-in tools) and is set, and for mcp that the server lists its tools. Then the toolset and exactly its tools are written in one transaction. The answer says which tools were added, removed or changed.`,
      security: bearerSecurity,
      middleware: [admin] as const,
      request: {
        params,
        body: {
          required: true,
          content: { "application/json": { schema: registeredToolsetBody } },
        },
      },
      responses: {
        200: jsonContent(registrationOutcomeView, "Replaced"),
        201: jsonContent(registrationOutcomeView, "Registered"),
        ...errorResponses(400, 401, 403, 409, 413, 415),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const registration = c.req.valid("json");
      if (registration.name !== name) {
        throw new ValidationError(
          `The name in the path (${name}) and in the body (${registration.name}) differ.`,
          { details: [{ path: "name", message: `Must equal the path's name, ${name}.` }] },
        );
      }
      const { created, ...outcome } = await registered.register(registration, {
        by: c.get("principal"),
      });
      c.set("audited", toolsetTouched(name, outcome));
      c.header("ETag", etag(outcome.toolset));
      if (created) {
        c.header("Location", `/v1/toolsets/${name}`);
        return c.json(outcome, 201);
      }
      return c.json(outcome, 200);
    },
  );

  app.openapi(
    createRoute({
      hide,
      method: "post",
      path: `${base}/{name}/refresh`,
      tags: ["Catalog admin"],
      summary: "List a registered MCP server's tools again",
      description:
        'Lists the server\'s tools again. Changed, added and removed tools are held for review (`held`) and the pins stay served, unless the registration has `"updates": "follow"`. An optional body adds renames.',
      security: bearerSecurity,
      middleware: [admin] as const,
      request: {
        params,
        body: {
          required: false,
          content: { "application/json": { schema: refreshBody } },
        },
      },
      responses: {
        200: jsonContent(registrationOutcomeView, "Refreshed"),
        ...errorResponses(400, 401, 403, 404, 409, 415),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const body = (c.req.header("content-length") ?? "0") === "0" ? {} : c.req.valid("json");
      const { created: _created, ...outcome } = await registered.refresh(
        name,
        body.renames ? { renames: body.renames } : {},
        // A server that acts as each caller lists its tools as the admin who asks.
        { by: c.get("principal") },
      );
      c.set("audited", toolsetTouched(name, outcome));
      c.header("ETag", etag(outcome.toolset));
      return c.json(outcome, 200);
    },
  );

  app.openapi(
    createRoute({
      hide,
      method: "get",
      path: `${base}/{name}/review`,
      tags: ["Catalog admin"],
      summary: "Read the changes a registered MCP server made that wait for review",
      description:
        "Each change a refresh held (a tool changed, added or removed), field by field from the pinned definition to what the server declares.",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: { params },
      responses: {
        200: jsonContent(toolsetReviewView, "The held changes"),
        ...errorResponses(400, 401, 403, 404, 409),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const review = await registered.review(name);
      c.header("ETag", etag(review));
      return c.json(review, 200);
    },
  );

  for (const decision of ["accept", "reject"] as const) {
    app.openapi(
      createRoute({
        hide,
        method: "post",
        path: `${base}/{name}/review/${decision}`,
        tags: ["Catalog admin"],
        summary: `${decision === "accept" ? "Serve" : "Reject"} held changes of a registered MCP server`,
        description:
          "Decides the chosen pending changes (`tools`; absent: all). Accepted ones are served from now on; rejected ones are not held again unless the server changes them again. Announced as ToolDefinitionsChanged.",
        security: bearerSecurity,
        middleware: [admin] as const,
        request: {
          params,
          headers: ifMatchHeaders,
          body: {
            required: false,
            content: { "application/json": { schema: reviewDecisionBody } },
          },
        },
        responses: {
          200: jsonContent(reviewDecisionView, "Decided"),
          ...errorResponses(400, 401, 403, 404, 409, 415),
        },
      }),
      async (c) => {
        const { name } = c.req.valid("param");
        const expected = parseIfMatch(c.req.valid("header")["if-match"]);
        // Without a JSON body (no content type) the validator hands over {}: every pending change.
        const { tools } = c.req.valid("json");
        const outcome = await registered[decision](name, tools, expected);
        c.set("audited", { kind: "toolset", id: name, touched: outcome.decided });
        c.header("ETag", etag(outcome.review));
        return c.json(outcome, 200);
      },
    );
  }

  app.openapi(
    createRoute({
      hide,
      method: "delete",
      path: `${base}/{name}`,
      tags: ["Catalog admin"],
      summary: "Remove a registered toolset and its tools",
      description:
        "Calls already scheduled for its tools fail as `unavailable`. Built-in toolsets cannot be removed (disable their tools instead).",
      security: bearerSecurity,
      middleware: [admin] as const,
      request: { params, headers: ifMatchHeaders },
      responses: {
        200: jsonContent(removedToolsetView, "Removed"),
        ...errorResponses(400, 401, 403, 404, 409),
      },
    }),
    async (c) => {
      const { name } = c.req.valid("param");
      const expected = parseIfMatch(c.req.valid("header")["if-match"]);
      const { removed } = await registered.remove(name, expected);
      c.set("audited", { kind: "toolset", id: name, touched: removed });
      return c.json({ removed }, 200);
    },
  );
}

/** A registration or refresh writes the toolset and all its tools, and removes the ones gone. */
function toolsetTouched(
  name: string,
  outcome: { tools: readonly { id: string }[]; diff: { removed: readonly string[] } },
): AuditedObject {
  const touched = [...outcome.tools.map((tool) => tool.id), ...outcome.diff.removed];
  return { kind: "toolset", id: name, touched };
}
