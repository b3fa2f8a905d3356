/**
 * Second baseline for the fastpath group, the floor: a bare Hono route on @hono/node-server
 * running readability_analyzer in this process, with no protocol, auth or storage around it.
 * Prints its port on stdout once it listens.
 */
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { testToolContext } from "@toolbus/core/testing";
import { readabilityAnalyzer, readabilityInput } from "@toolbus/tools/readability";
import { Hono } from "hono";

const context = testToolContext(undefined);

const app = new Hono();
app.post("/call", async (c) => {
  // Validated with the tool's own schema, as every other server in the comparison does.
  const input = readabilityInput.parse(await c.req.json());
  const outcome = await readabilityAnalyzer.execute(input, context);
  return c.json({ status: "succeeded", output: outcome.output, data: outcome.data });
});

const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info: AddressInfo) => {
  process.stdout.write(`${info.port}\n`);
});
server.on("error", (error) => {
  console.error(error);
  process.exit(1);
});
