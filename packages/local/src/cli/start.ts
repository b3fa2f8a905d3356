import { access } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type BusRule, busRules } from "@toolbus/core";
import { z } from "zod";
import type { LocalFunction } from "../bus";
import { stopOnSignals } from "../dynamodb/signals";
import { startLocalSystem } from "../runtime/system";

const HELP = `Usage: npm start -- [options]

Runs Toolbus on this machine: DynamoDB Local and the local EventBridge-compatible bus.

  --memory            keep DynamoDB in memory (default: on disk under the state dir)
  --state-dir <dir>   where local.json and the database live (default: .toolbus)
  --bus-port <port>   port for the local bus (default: a free port)
  --stage <name>      stage name; the bus is toolbus-<stage> (default: local)
  --help              show this help
`;

const options = z.object({
  memory: z.boolean().default(false),
  stateDir: z.string().min(1).default(".toolbus"),
  busPort: z.coerce.number().int().min(1).max(65_535).optional(),
  stage: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/, "stage names are lowercase letters, digits and dashes")
    .default("local"),
});

/** Loads each rule's handler from functions/<handler>.ts, reporting those not written yet. */
async function loadHandlers(rules: readonly BusRule[]) {
  const functionsDir = resolve(import.meta.dirname, "../../../../functions");
  const handlers: Record<string, LocalFunction> = {};
  const wired: BusRule[] = [];
  for (const rule of rules) {
    const file = resolve(functionsDir, `${rule.handler}.ts`);
    const exists = await access(file).then(
      () => true,
      () => false,
    );
    if (!exists) {
      console.warn(`  rule ${rule.name}: no handler at functions/${rule.handler}.ts yet, skipped`);
      continue;
    }
    const module = (await import(pathToFileURL(file).href)) as { handler: LocalFunction };
    handlers[rule.handler] = module.handler;
    wired.push(rule);
  }
  return { handlers, rules: wired };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      memory: { type: "boolean" },
      "state-dir": { type: "string" },
      "bus-port": { type: "string" },
      stage: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const parsed = options.safeParse({
    memory: values.memory,
    stateDir: values["state-dir"],
    busPort: values["bus-port"],
    stage: values.stage,
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `  --${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid options:\n${problems.join("\n")}`);
  }
  const config = parsed.data;
  console.log("Starting Toolbus locally...");
  const wiring = await loadHandlers(busRules([]));
  const system = await startLocalSystem({
    stateDir: resolve(config.stateDir),
    memory: config.memory,
    stage: config.stage,
    ...(config.busPort ? { busPort: config.busPort } : {}),
    ...wiring,
  });
  stopOnSignals(system.stop);
  console.log(
    [
      `Toolbus is running (stage ${system.stage}).`,
      `  DynamoDB Local:  ${system.dynamodb.endpoint}${config.memory ? " (in memory)" : ""}`,
      `  EventBridge:     ${system.busServer.endpoint} (bus ${system.busName})`,
      `  Endpoints file:  ${system.stateFile}`,
      "Press Ctrl-C to stop.",
    ].join("\n"),
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
