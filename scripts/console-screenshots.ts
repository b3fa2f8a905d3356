/**
 * Screenshots of the console for the docs, taken in Debian's Chromium (as the console's browser
 * tests drive it) against a stage of its own: DynamoDB Local in memory, the local bus, the
 * built-in tools and two example tools defined below. Writes into docs/images/:
 *
 *   console-catalog.png  the catalog at 1280x800 after a search, with why each tool matched
 *   console-tool.png     readability_analyzer's page after a call from its Try-it form
 *   console-run.png      a run's timeline with three finished calls (progress, a failure)
 *   console-phone.png    the catalog at 390x844
 *
 *   npm run screenshots:console
 *
 * What the pictures show is the same on every run but for times and ids. `TOOLBUS_CHROMIUM`
 * points at another Chromium than /usr/bin/chromium.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, stat } from "node:fs/promises";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineTool, ToolFailure } from "@toolbus/core";
import { type ApiServer, composeLocalToolbus, serveApi } from "@toolbus/local";
import { LocalEventBus, localEventBridgeClient } from "@toolbus/local/bus";
import {
  type DynamoDbLocal,
  localDynamoDbClient,
  startDynamoDbLocal,
} from "@toolbus/local/dynamodb";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import type { Browser, Locator, Page } from "playwright-core";
import { z } from "zod";
import { launchChromium } from "../test/support/console";

const OUT_DIR = fileURLToPath(new URL("../docs/images/", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The run the timeline shows: the stage is new, so a fixed id names it. */
const RUN_ID = "run-weekly-digest";

/** Builds a report in three steps, saying which one it is on. */
const weeklyReport = defineTool({
  spec: {
    id: "weekly_report",
    toolset: "examples",
    title: "Weekly report",
    description: "Gathers the week's figures, charts them and writes a short summary.",
    category: "utility",
    usageHint: "when someone asks for a summary of the past week's numbers",
    timeoutMs: 30_000,
  },
  input: z.object({ team: z.string().min(1).describe("Whose week to report on.") }),
  output: z.object({ team: z.string(), sections: z.number() }),
  async execute(input, context) {
    const steps = ["gathering figures", "drawing charts", "writing the summary"];
    for (const [index, step] of steps.entries()) {
      context.progress(index + 1, steps.length, step);
      // Longer apart than the bus's progress window (500 ms), so every step is shown.
      await new Promise((resolve) => setTimeout(resolve, 600));
    }
    return {
      output: `The ${input.team} team's weekly report is ready: 3 sections.`,
      data: { team: input.team, sections: 3 },
    };
  },
});

/** Asks a warehouse that is down: the failed call on the timeline. */
const inventoryLookup = defineTool({
  spec: {
    id: "inventory_lookup",
    toolset: "examples",
    title: "Inventory lookup",
    description: "How many of a product the warehouse has in stock.",
    category: "utility",
    usageHint: "when someone asks whether a product is in stock",
  },
  input: z.object({ sku: z.string().min(1).describe("The product's stock-keeping unit.") }),
  output: z.object({ sku: z.string(), inStock: z.number() }),
  async execute() {
    throw new ToolFailure({
      kind: "upstream_error",
      message: "The warehouse API answered 503 Service Unavailable.",
      retryable: true,
      recovery: "replan",
    });
  },
});

/** DynamoDB Local, the Toolbus composed on it, its API on loopback, and Chromium. */
interface Stage {
  url: string;
  adminKey: string;
  browser: Browser;
  request(path: string, json?: unknown): Promise<Response>;
  settle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * What test/support/console.ts's startConsoleStage builds, with a DynamoDB Local of its own:
 * that one asks vitest for the test run's, which only a test can.
 */
async function startStage(): Promise<Stage> {
  const stoppers: (() => Promise<void> | void)[] = [];
  const stop = async () => {
    const errors: unknown[] = [];
    for (const stopOne of stoppers.reverse()) {
      await Promise.resolve()
        .then(stopOne)
        .catch((error: unknown) => errors.push(error));
    }
    if (errors.length > 0) throw new AggregateError(errors, "stopping the stage failed");
  };
  try {
    const db: DynamoDbLocal = await startDynamoDbLocal();
    stoppers.push(() => db.stop());
    const dynamodb = localDynamoDbClient(db.endpoint);
    stoppers.push(() => dynamodb.destroy());
    const bus = new LocalEventBus({ delivery: { baseDelayMs: 5, maxDelayMs: 50 } });
    stoppers.push(() => bus.close());
    const eventBridge = localEventBridgeClient({ bus });
    stoppers.push(() => eventBridge.destroy());
    const adminKey = `screenshots-admin-${randomBytes(18).toString("base64url")}`;
    const { toolbus, app } = await composeLocalToolbus({
      dynamodb,
      eventBridge,
      bus,
      tableName: `toolbus-screenshots-${randomUUID().slice(0, 8)}`,
      busName: "toolbus-screenshots",
      adminKey,
      tools: [...builtinTools, weeklyReport, inventoryLookup],
      toolsets: [
        ...builtinToolsets,
        {
          name: "examples",
          description: "Example tools of a team's own",
          owner: "docs",
          kind: "builtin",
        },
      ],
      secret: () => undefined,
      followIntervalMs: 20,
    });
    const settle = async () => {
      await toolbus.settled();
      await bus.drain();
    };
    stoppers.push(settle);
    const api: ApiServer = await serveApi(app, { port: 0 });
    stoppers.push(() => api.close());
    const browser = await launchChromium();
    stoppers.push(() => browser.close());
    return {
      url: api.url,
      adminKey,
      browser,
      request: (path, json) =>
        Promise.resolve(
          app.request(path, {
            method: json === undefined ? "GET" : "POST",
            headers: {
              authorization: `Bearer ${adminKey}`,
              ...(json === undefined ? {} : { "content-type": "application/json" }),
            },
            ...(json === undefined ? {} : { body: JSON.stringify(json) }),
          }),
        ),
      settle,
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/**
 * A fresh page signed in with the admin key, showing the catalog. Fails on a script error or
 * an API answer of 400 or more (the sign-in's probe for an OAuth issuer, a 404, is expected).
 */
async function signedInPage(
  stage: Stage,
  viewport: { width: number; height: number },
): Promise<{ page: Page; problems: string[] }> {
  // Times read the same wherever the script runs.
  const context = await stage.browser.newContext({
    viewport,
    locale: "en-US",
    timezoneId: "UTC",
  });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("response", (response) => {
    const { pathname } = new URL(response.url());
    if (response.status() >= 400) {
      problems.push(`${response.status()} ${response.request().method()} ${pathname}`);
    }
  });
  await page.goto(`${stage.url}/console`);
  await page.getByLabel("API key").fill(stage.adminKey);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();
  return { page, problems };
}

/**
 * Waits until nothing is loading, then saves the window as a PNG, or, with `to`, the page from
 * its top to the bottom of `to` (with a margin), at the window's width.
 */
async function shoot(page: Page, problems: string[], name: string, to?: Locator): Promise<string> {
  await page.locator(".loading").waitFor({ state: "detached" });
  // An error notice of the page's own; a failed call's card on a timeline is meant to show one.
  const errors = await page.evaluate<string[]>(
    `[...document.querySelectorAll(".notice.error")].filter((e) => !e.closest("article")).map((e) => e.textContent)`,
  );
  problems.push(...errors.map((text) => `error notice: ${text}`));
  // Whatever has the focus (a heading the router moved it to) shows no ring in the picture.
  await page.evaluate("document.activeElement?.blur()");
  if (problems.length > 0) throw new Error(`${name}: ${problems.join("; ")}`);
  const path = `${OUT_DIR}${name}`;
  if (to) {
    const box = await to.boundingBox();
    if (!box) throw new Error(`${name}: ${to} is not shown`);
    const scrolled = await page.evaluate<number>("window.scrollY");
    const height = Math.ceil(box.y + box.height + scrolled) + 16;
    const width = page.viewportSize()?.width ?? 1280;
    await page.screenshot({
      path,
      fullPage: true,
      clip: { x: 0, y: 0, width, height },
      animations: "disabled",
    });
  } else {
    await page.screenshot({ path, fullPage: false, animations: "disabled" });
  }
  return path;
}

async function searchCatalog(page: Page, query: string): Promise<void> {
  const search = page.getByRole("searchbox", { name: "Search tools" });
  await search.fill(query);
  await search.press("Enter");
  const results = page.getByRole("region", { name: /Search results for/ });
  await results
    .getByRole("row")
    .filter({ has: page.getByRole("link", { name: "Readability analyzer", exact: true }) })
    .waitFor();
}

const SEARCH = "how readable is this paragraph";

async function catalog(stage: Stage): Promise<string> {
  const { page, problems } = await signedInPage(stage, { width: 1280, height: 800 });
  await searchCatalog(page, SEARCH);
  const path = await shoot(page, problems, "console-catalog.png");
  await page.context().close();
  return path;
}

async function phone(stage: Stage): Promise<string> {
  const { page, problems } = await signedInPage(stage, { width: 390, height: 844 });
  await page
    .locator("main")
    .getByRole("link", { name: "Readability analyzer", exact: true })
    .waitFor();
  const path = await shoot(page, problems, "console-phone.png");
  await page.context().close();
  return path;
}

async function tool(stage: Stage): Promise<string> {
  const { page, problems } = await signedInPage(stage, { width: 1280, height: 800 });
  await page.evaluate('location.hash = "#/tools/readability_analyzer"');
  await page.getByRole("heading", { level: 1, name: "Readability analyzer" }).waitFor();
  await page
    .getByRole("button", { name: /Put this example in the form\W+Check a product announcement/ })
    .click();
  await page.getByRole("button", { name: "Call the tool" }).click();
  const result = page.getByRole("region", { name: "Result" });
  await result.getByText("succeeded", { exact: true }).waitFor();
  // From the top of the page to the end of the result.
  const path = await shoot(page, problems, "console-tool.png", result);
  await page.context().close();
  return path;
}

async function run(stage: Stage): Promise<string> {
  const calls = [
    {
      tool: "readability_analyzer",
      callId: "check-intro",
      input: { text: "Toolbus gives agents one catalog of tools. Each call is logged." },
    },
    { tool: "weekly_report", callId: "report", input: { team: "platform" } },
    { tool: "inventory_lookup", callId: "stock", input: { sku: "TB-1042" } },
  ];
  for (const call of calls) {
    const response = await stage.request(`/v1/runs/${RUN_ID}/calls`, { ...call, wait: 10 });
    if (response.status !== 200) {
      throw new Error(`calling ${call.tool}: ${response.status} ${await response.text()}`);
    }
  }
  await stage.settle();
  const { page, problems } = await signedInPage(stage, { width: 1280, height: 800 });
  await page.evaluate(`location.hash = "#/runs/${RUN_ID}"`);
  await page.getByRole("heading", { level: 1, name: `Run ${RUN_ID}` }).waitFor();
  const card = (name: string) => page.getByRole("article", { name });
  await card("readability_analyzer · check-intro")
    .getByText("Succeeded", { exact: true })
    .waitFor();
  await card("weekly_report · report").getByText("Succeeded", { exact: true }).waitFor();
  for (const step of ["gathering figures", "drawing charts", "writing the summary"]) {
    await card("weekly_report · report").getByText(step).first().waitFor();
  }
  await card("inventory_lookup · stock").getByText("Failed: upstream_error").waitFor();
  // From the top of the page to the last call.
  const path = await shoot(page, problems, "console-run.png", card("inventory_lookup · stock"));
  await page.context().close();
  return path;
}

async function main(): Promise<void> {
  await mkdir(OUT_DIR, { recursive: true });
  const stage = await startStage();
  const written: string[] = [];
  try {
    written.push(await catalog(stage));
    written.push(await tool(stage));
    written.push(await run(stage));
    written.push(await phone(stage));
  } finally {
    await stage.stop();
  }
  for (const path of written) {
    const { size } = await stat(path);
    console.log(`${relative(ROOT, path)}  ${Math.round(size / 1024)} KB`);
  }
}

await main();
