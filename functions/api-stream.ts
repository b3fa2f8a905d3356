import { loadFunctionSecrets } from "@toolbus/core/deployment";
import { createApi, streamingHandler } from "@toolbus/http";
import { toolbus } from "./toolbus";

/**
 * The stage's streaming endpoint: a Function URL in RESPONSE_STREAM mode, because API Gateway
 * buffers every response. It serves what stays open — a run's events, the stage's events and
 * `/mcp` — and `/health`; a follower holds one connection for up to the function's timeout
 * and resumes with Last-Event-ID. The recorder is another function, so new events are found by
 * reading the log every TOOLBUS_FOLLOW_POLL_MS.
 */
const pollMs = Number(process.env.TOOLBUS_FOLLOW_POLL_MS) || 1_000;
const maxMs = Number(process.env.TOOLBUS_FOLLOW_MAX_MS) || 60_000;

const app = createApi({
  ...toolbus.apiDeps,
  surface: "streaming",
  followIntervalMs: pollMs,
  followMaxMs: maxMs,
  // Asking whether the key still holds is a cached read: as often as the log is read.
  keyCheckMs: pollMs,
  // A Function URL answers only its own host: no page can rebind another name onto it.
  allowedHosts: "any",
});

/** Only the admin key is bound: read from SSM on the first request. */
export const handler = streamingHandler(app, { before: () => loadFunctionSecrets() });
