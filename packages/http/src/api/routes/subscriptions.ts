import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { ApiDeps } from "@toolbus/core/compose/api-deps";
import { subscriptionId } from "@toolbus/wire/model/subscription";
import {
  failuresPageView,
  failuresQuery,
  redriveBody,
  redriveResultView,
  replayBody,
  replayResultView,
  subscriptionBody,
  subscriptionListView,
  subscriptionView,
  subscriptionWithSecretView,
} from "@toolbus/wire/schemas";
import { requirePermission } from "../../common/auth";
import type { HttpEnv } from "../../common/env";
import { bearerSecurity, errorResponses, jsonContent } from "../schemas";

const idParams = z.object({ id: subscriptionId.meta({ example: "sub_0123456789abcdef01234567" }) });

/**
 * `/v1/subscriptions`: an event pattern over Toolbus's events and a target. A caller manages
 * its own subscriptions (an admin any); creating one needs the stage's `subscribe` permission.
 * Thin: every rule is SubscriptionService's.
 */
export function registerSubscriptionRoutes(app: OpenAPIHono<HttpEnv>, deps: ApiDeps): void {
  const { subscriptions: load, config } = deps;
  if (!load) return;
  const action = (path: "pause" | "resume", summary: string) =>
    app.openapi(
      createRoute({
        method: "post",
        path: `/v1/subscriptions/{id}/${path}`,
        tags: ["Subscriptions"],
        summary,
        security: bearerSecurity,
        middleware: [requirePermission(config, "subscribe")] as const,
        request: { params: idParams },
        responses: {
          200: jsonContent(subscriptionView, "The subscription"),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      }),
      async (c) =>
        c.json(await (await load())[path](c.get("principal"), c.req.valid("param").id), 200),
    );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/subscriptions",
      tags: ["Subscriptions"],
      summary: "Subscribe a webhook, bus or queue to the Toolbus events a pattern matches",
      description:
        "The pattern is an EventBridge event pattern over Toolbus's events (source `toolbus`, detail types ToolCallScheduled and ToolResultReceived); a bad one is a 400 naming what is wrong. A webhook's deliveries are signed the Standard Webhooks way with the secret in this answer, shown once.",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: {
        body: { required: true, content: { "application/json": { schema: subscriptionBody } } },
      },
      responses: {
        201: jsonContent(
          subscriptionWithSecretView,
          "Created; keep the secret, it is not shown again",
        ),
        ...errorResponses(400, 401, 403, 409, 413, 415),
      },
    }),
    async (c) => c.json(await (await load()).create(c.get("principal"), c.req.valid("json")), 201),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/subscriptions",
      tags: ["Subscriptions"],
      summary: "List the caller's subscriptions (an admin's: all)",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      responses: {
        200: jsonContent(subscriptionListView, "Subscriptions"),
        ...errorResponses(401, 403),
      },
    }),
    async (c) => c.json({ subscriptions: await (await load()).list(c.get("principal")) }, 200),
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/subscriptions/{id}",
      tags: ["Subscriptions"],
      summary: "Get a subscription",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: { params: idParams },
      responses: {
        200: jsonContent(subscriptionView, "The subscription"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => c.json(await (await load()).get(c.get("principal"), c.req.valid("param").id), 200),
  );

  action("pause", "Pause deliveries (events matched meanwhile are not queued)");
  action("resume", "Resume deliveries, with a clean failure streak");

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/subscriptions/{id}/rotate-secret",
      tags: ["Subscriptions"],
      summary: "Make a new signing secret; the old one signs beside it for 24 hours",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: { params: idParams },
      responses: {
        200: jsonContent(subscriptionWithSecretView, "The new secret, shown once"),
        ...errorResponses(400, 401, 403, 404, 409),
      },
    }),
    async (c) =>
      c.json(await (await load()).rotateSecret(c.get("principal"), c.req.valid("param").id), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/subscriptions/{id}",
      tags: ["Subscriptions"],
      summary: "Delete a subscription",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: { params: idParams },
      responses: { 204: { description: "Deleted" }, ...errorResponses(400, 401, 403, 404) },
    }),
    async (c) => {
      await (await load()).remove(c.get("principal"), c.req.valid("param").id);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/subscriptions/{id}/failures",
      tags: ["Subscriptions"],
      summary: "Dead letters: deliveries that failed until the retry window closed, newest first",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: { params: idParams, query: failuresQuery },
      responses: {
        200: jsonContent(failuresPageView, "A page of dead letters"),
        ...errorResponses(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      const page = await (await load()).failures(c.get("principal"), c.req.valid("param").id, {
        limit,
        ...(cursor ? { cursor } : {}),
      });
      return c.json({ failures: page.deliveries, cursor: page.cursor }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/subscriptions/{id}/redrive",
      tags: ["Subscriptions"],
      summary: "Send dead letters again (all, or the given event keys), with a fresh retry window",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: {
        params: idParams,
        body: { required: false, content: { "application/json": { schema: redriveBody } } },
      },
      responses: {
        200: jsonContent(redriveResultView, "How many went back"),
        ...errorResponses(400, 401, 403, 404, 415),
      },
    }),
    async (c) => {
      const body = c.req.valid("json") as z.infer<typeof redriveBody> | undefined;
      const redriven = await (await load()).redrive(
        c.get("principal"),
        c.req.valid("param").id,
        body?.eventKeys,
      );
      return c.json({ redriven }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/subscriptions/{id}/replay",
      tags: ["Subscriptions"],
      summary: "Send logged events that the pattern matches again, marked as a replay",
      description:
        "Of one run (`runId`) or a time window (`from`, `to`). Sent with the next retry run, with `replay: true` and the first `webhook-id`. At most 10,000 events are read (`complete`).",
      security: bearerSecurity,
      middleware: [requirePermission(config, "subscribe")] as const,
      request: {
        params: idParams,
        body: { required: true, content: { "application/json": { schema: replayBody } } },
      },
      responses: {
        202: jsonContent(replayResultView, "Queued: how many of the events read matched"),
        ...errorResponses(400, 401, 403, 404, 415),
      },
    }),
    async (c) =>
      c.json(
        await (await load()).replay(
          c.get("principal"),
          c.req.valid("param").id,
          c.req.valid("json"),
        ),
        202,
      ),
  );
}
