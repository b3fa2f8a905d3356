import { withFunctionSecrets } from "@toolbus/core/deployment";
import { createApi } from "@toolbus/http";
import { handle } from "hono/aws-lambda";
import { streamUrl, toolbus } from "./toolbus";

/** Resolves once calls run in this process have been announced: `npm start` waits on stop. */
export const settled = () => toolbus.settled();

/** The HTTPS API. Built at cold start from the environment; `app` is served as-is locally. */
export const app = createApi({
  ...toolbus.apiDeps,
  ...(streamUrl ? { streamUrl } : {}),
  // Behind API Gateway a response is buffered: an event stream ends once it has sent events, or
  // before the integration timeout, and followers reconnect with Last-Event-ID (long polling).
  // The stage's streaming URL (api-stream.ts) holds them on one connection instead.
  // Locally this process alone writes the table: the recorder's appends and the API's key
  // revocations wake streams themselves, so idle streams wait without polling; a slow poll
  // stays as a safety net.
  // On AWS, API Gateway answers only the stage's own host names, so no page can rebind another
  // name onto it; locally /mcp answers loopback names unless the stage lists others.
  ...(process.env.AWS_LAMBDA_FUNCTION_NAME
    ? { followMaxMs: 25_000, followBuffered: true, allowedHosts: "any" as const }
    : { followIntervalMs: 60_000, keyCheckMs: 60_000 }),
});

/** The admin key and the tools' secrets are bound: read from SSM on the first request. */
export const handler = withFunctionSecrets(handle(app));
