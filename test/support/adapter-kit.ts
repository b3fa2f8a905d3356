import { createToolbusClient, type ToolbusClient } from "@toolbus/client";
import { defineTool, ToolFailure } from "@toolbus/core";
import { type ApiServer, serveApi } from "@toolbus/local";
import { z } from "zod";
import { startTestToolbus, type TestToolbus } from "./toolbus";

// A small catalog for the adapter tests: tools that differ by mode and role, so what an
// adapter offers can be told apart from "everything", and one that always fails.

const toolset = {
  name: "adapter_kit",
  description: "Tools for the adapter tests",
  owner: "adapter-tests",
  kind: "builtin",
} as const;

const echoInput = z.object({ text: z.string().min(1) }).strict();

function echo(id: string, availability: { modes?: string[]; minRole?: string } = {}) {
  return defineTool({
    spec: {
      id,
      toolset: toolset.name,
      title: `Echo ${id}`,
      description: `Repeats the text (${id}).`,
      category: "utility",
      usageHint: "When the text should come back.",
      availability,
    },
    input: echoInput,
    output: z.object({ echoed: z.string() }),
    execute: async (input) => ({ output: `echo: ${input.text}`, data: { echoed: input.text } }),
  });
}

const failing = defineTool({
  spec: {
    id: "kit_failing",
    toolset: toolset.name,
    title: "Always fails",
    description: "Fails the way an unreachable upstream does.",
    category: "research",
    usageHint: "Never helpful.",
  },
  input: z.object({ query: z.string() }).strict(),
  output: z.object({}),
  async execute() {
    throw new ToolFailure({
      kind: "upstream_error",
      message: "The upstream is down.",
      retryable: true,
      recovery: "replan",
    });
  },
});

export const KIT_TOOLS = [
  echo("kit_echo"),
  echo("kit_review_echo", { modes: ["review"] }),
  echo("kit_admin_echo", { minRole: "admin" }),
  failing,
];

/** Option sets whose selections differ: the adapters must follow each exactly. */
export const SELECTIONS = [
  { label: "the default mode", options: {} },
  { label: "the review mode", options: { mode: "review" } },
  { label: "a lower role", options: { role: "member" } },
  { label: "a deny list", options: { deny: ["kit_failing"] } },
] as const;

export interface AdapterKit {
  system: TestToolbus;
  server: ApiServer;
  client: ToolbusClient;
  /** The tool ids `POST /v1/select` gives for these options. */
  selected(options: { mode?: string; role?: string; deny?: readonly string[] }): Promise<string[]>;
  /** The run's events as `detailType toolId status?` lines. */
  calls(runId: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startAdapterKit(): Promise<AdapterKit> {
  const system = await startTestToolbus({
    config: { modes: { default: "draft", available: ["draft", "review"] } },
    tools: KIT_TOOLS,
    toolsets: [toolset],
  });
  const server = await serveApi(system.app, { port: 0 });
  const client = createToolbusClient({ baseUrl: server.url, apiKey: system.adminKey });
  return {
    system,
    server,
    client,
    async selected(options) {
      const response = await system.request("/v1/select", { method: "POST", json: options });
      if (response.status !== 200) throw new Error(`select answered ${response.status}`);
      return ((await response.json()) as { tools: string[] }).tools;
    },
    async calls(runId) {
      const events = await system.events<{
        detailType: string;
        detail: { toolId: string; status?: string };
      }>(runId);
      return events.map((event) =>
        [event.detailType, event.detail.toolId, event.detail.status].filter(Boolean).join(" "),
      );
    },
    async stop() {
      await server.close();
      await system.stop();
    },
  };
}
