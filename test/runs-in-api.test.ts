import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { runsInApi } from "@toolbus/core/compose/runs-in-api";
import { lambdaClient, lambdaDispatcher } from "@toolbus/core/dispatch";
import { builtinTools } from "@toolbus/tools/builtin";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestToolbus, type TestToolbus } from "./support/toolbus";

// A stand-in for Lambda's Invoke API that refuses every invocation as throttled, and keeps the
// path of each: a call the API hands to a tool's function is seen here, and then goes by the bus.
const invoked: string[] = [];
const lambda = createServer((req, res) => {
  invoked.push(decodeURIComponent(req.url ?? ""));
  req.resume();
  req.on("end", () => {
    res.writeHead(429, {
      "content-type": "application/json",
      "x-amzn-errortype": "TooManyRequestsException:",
    });
    res.end(JSON.stringify({ Type: "User", message: "Rate Exceeded." }));
  });
});

let system: TestToolbus;
beforeAll(async () => {
  await new Promise<void>((resolve) => lambda.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(lambda.address() as AddressInfo).port}`;
  const client = lambdaClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
  });
  const functions = Object.fromEntries(
    builtinTools.map((tool) => [`tools/${tool.spec.id}`, `toolbus-test-${tool.spec.id}`]),
  );
  system = await startTestToolbus({ dispatcher: lambdaDispatcher({ client, functions }) });
});

afterAll(async () => {
  await system.stop();
  lambda.closeAllConnections();
  await new Promise((resolve) => lambda.close(resolve));
});

describe("built-in tools the API runs itself", () => {
  it("are those that need no network, secret, caller's account or fallback", () => {
    const inApi = builtinTools.filter(runsInApi).map((tool) => tool.spec.id);
    expect(inApi.sort()).toEqual(["readability_analyzer", "static_links"]);
  });

  it("answer a waited-for call without invoking the tool's function", async () => {
    invoked.length = 0;
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "readability_analyzer", input: { text: "A short text. It reads well." } },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { status: string }).status).toBe("succeeded");
    expect(invoked).toEqual([]);
    const events = await system.events<{ detailType: string }>(runId);
    expect(events.map((event) => event.detailType)).toEqual([
      "ToolCallScheduled",
      "ToolResultReceived",
    ]);
  });

  it("leave every other tool's waited-for call to its own function", async () => {
    invoked.length = 0;
    const runId = system.runId();
    const response = await system.request(`/v1/runs/${runId}/calls`, {
      method: "POST",
      json: { tool: "link_validator", input: { urls: ["http://127.0.0.1:9/"] }, wait: 5 },
    });
    expect(response.status).toBe(200);
    expect(invoked).toEqual(["/2015-03-31/functions/toolbus-test-link_validator/invocations"]);
  });
});
