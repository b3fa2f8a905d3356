import { defineTool } from "@toolbus/core";
import { builtinTools, builtinToolsets } from "@toolbus/tools";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  type ConsoleStage,
  expectOnly,
  horizontalOverflow,
  seriousFindings,
  signedInPage,
  signIn,
  startConsoleStage,
} from "./support/console";
import { CONSOLE_TEST_TOOLSET, refuses } from "./support/console-tools";

/*
 * The console's catalog and tool pages in a real browser: finding a tool by what it does and
 * seeing why it matched, why a tool is unavailable and what sets it up, running a tool through
 * the form generated from its input schema (an image it returns shown as an image), what a
 * viewer is not offered, and an administrator disabling a tool.
 */

/** A 1x1 PNG: real image bytes, so the browser decodes them. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const snapshot = defineTool({
  spec: {
    id: "test_snapshot",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Dashboard snapshot",
    description: "A picture of the dashboard as it is now.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({}),
  output: z.object({ taken: z.boolean() }),
  async execute() {
    return {
      output: "The dashboard at noon.",
      data: { taken: true },
      content: [
        { type: "text", text: "The dashboard at noon." },
        { type: "image", data: PNG, mimeType: "image/png" },
      ],
    };
  },
});

const echo = defineTool({
  spec: {
    id: "test_echo",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Echo",
    description: "Says back what it was told, as often as asked.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({
    message: z.string().min(1).max(200).describe("What to say back."),
    times: z.number().int().min(1).max(5).describe("How many times."),
    loud: z.boolean().optional().describe("Shout it."),
    tone: z.enum(["plain", "fancy"]).optional().describe("How it sounds."),
    tags: z.array(z.string()).optional().describe("Labels to return as they are."),
  }),
  output: z.object({ said: z.string(), tags: z.array(z.string()) }),
  async execute(input) {
    const word = input.loud ? input.message.toUpperCase() : input.message;
    const said = Array.from({ length: input.times }, () => word).join(" ");
    return {
      output: `${said} (${input.tone ?? "plain"})`,
      data: { said, tags: input.tags ?? [] },
    };
  },
});

const retired = defineTool({
  spec: {
    id: "test_retired",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Retired tool",
    description: "A tool an administrator turns off.",
    category: "utility",
    usageHint: "tests",
  },
  input: z.object({}),
  output: z.object({}),
  async execute() {
    return { output: "", data: {} };
  },
});

/** Opens a waiting call of `test_gate`: how a test lets a call finish once it is being polled. */
const gates: (() => void)[] = [];

const gate = defineTool({
  spec: {
    id: "test_gate",
    toolset: CONSOLE_TEST_TOOLSET.name,
    title: "Gate",
    description: "Finishes when the test opens its gate.",
    category: "utility",
    usageHint: "tests",
    timeoutMs: 30_000,
  },
  input: z.object({}),
  output: z.object({ opened: z.boolean() }),
  async execute(_input, context) {
    context.progress(1, 2, "waiting at the gate");
    await new Promise<void>((resolve) => gates.push(resolve));
    return { output: "The gate opened.", data: { opened: true } };
  },
});

let stage: ConsoleStage;
let member: string;
let viewer: string;

beforeAll(async () => {
  stage = await startConsoleStage({
    tools: [...builtinTools, snapshot, echo, retired, gate, refuses],
    toolsets: [...builtinToolsets, CONSOLE_TEST_TOOLSET],
    // The API holds a call's request one second at most: a slower call is polled for.
    config: { calls: { maxWaitSeconds: 1 } },
  });
  member = (await stage.key("catalog-member", "member")).key;
  viewer = (await stage.key("catalog-viewer", "viewer")).key;
}, 60_000);
afterAll(() => stage?.stop());

/** The row of a tools table whose first cell links to the tool with this title. */
function rowOf(page: Page, title: string, within = page.locator("main")) {
  return within
    .getByRole("row")
    .filter({ has: page.getByRole("link", { name: title, exact: true }) });
}

async function openTool(page: Page, id: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(`#/tools/${id}`)}`);
}

describe("the catalog", () => {
  it("finds a tool by words not in its name and says why it matched, and keeps the search on reload", async () => {
    const { page, problems } = await signedInPage(stage, member);
    const search = page.getByRole("searchbox", { name: "Search tools" });
    await search.fill("how easy is this text to read");
    await search.press("Enter");
    const results = page.getByRole("region", { name: /Search results for/ });
    await results.waitFor();
    const found = rowOf(page, "Readability analyzer", results);
    await found.waitFor();
    const why = (await found.textContent()) ?? "";
    // "easy" is not in the tool's name: the search found it as "ease" in its description.
    expect(why).toContain("easy");
    expect(why).toContain("as “ease” in its description");
    expect(await results.getByRole("row").nth(1).textContent()).toContain("Readability analyzer");
    expect(page.url()).toContain("#/catalog?q=how+easy+is+this+text+to+read");

    await page.reload();
    await page.getByRole("region", { name: /Search results for/ }).waitFor();
    expect(await page.getByRole("searchbox", { name: "Search tools" }).inputValue()).toBe(
      "how easy is this text to read",
    );
    await rowOf(
      page,
      "Readability analyzer",
      page.getByRole("region", { name: /Search/ }),
    ).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("says why a tool is unavailable: the missing capability, why, and what sets it up", async () => {
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    const github = rowOf(page, "GitHub");
    const text = (await github.textContent()) ?? "";
    expect(text).toContain("unavailable");
    expect(text).toContain("Needs github_token: GITHUB_TOKEN is not set on this stage.");
    expect(text).toContain("To set it up: set GITHUB_TOKEN.");
    expect((await rowOf(page, "Readability analyzer").textContent()) ?? "").not.toContain(
      "unavailable",
    );

    // Only the unavailable ones, by the availability filter.
    await page.getByLabel("Availability").selectOption("false");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("match the filters").waitFor();
    expect(page.url()).toContain("available=false");
    await rowOf(page, "Calendar events").waitFor();
    expect(await rowOf(page, "GitHub").count()).toBe(1);
    expect(await rowOf(page, "Readability analyzer").count()).toBe(0);

    // An administrator's search also names the matching tools left out, with the reason.
    await page.getByRole("button", { name: "Show all" }).click();
    await page.getByText("match the filters").waitFor({ state: "detached" });
    await page.getByRole("searchbox", { name: "Search tools" }).fill("github issues");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const results = page.getByRole("region", { name: /Search results for/ });
    await results.getByRole("heading", { name: "Matching tools left out" }).waitFor();
    const left = rowOf(page, "GitHub", results);
    expect((await left.textContent()) ?? "").toContain("Needs github_token");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("offers a viewer neither the Try-it form nor enable / disable", async () => {
    const { page, problems } = await signedInPage(stage, viewer, { width: 390, height: 800 });
    await rowOf(page, "Readability analyzer").waitFor();
    expect(await page.getByRole("button", { name: /^(Disable|Enable) / }).count()).toBe(0);
    expect(await horizontalOverflow(page)).toBe(0);

    await openTool(page, "readability_analyzer");
    await page.getByRole("heading", { level: 1, name: "Readability analyzer" }).waitFor();
    await page.getByText("may look at this tool but not call it").waitFor();
    expect(await page.getByRole("heading", { name: "Try it" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Call the tool" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Disable|Enable) / }).count()).toBe(0);
    expect(await horizontalOverflow(page)).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("lets an administrator disable a tool, which then shows as unavailable with the reason", async () => {
    const { page, problems } = await signedInPage(stage, stage.system.adminKey);
    const row = rowOf(page, "Retired tool");
    expect((await row.textContent()) ?? "").not.toContain("unavailable");
    await row.getByRole("button", { name: "Disable Retired tool" }).click();
    await page.getByRole("status").getByText("Retired tool is disabled on this stage.").waitFor();
    const after = rowOf(page, "Retired tool");
    const text = (await after.textContent()) ?? "";
    expect(text).toContain("unavailable");
    expect(text).toContain("Disabled on this stage by an administrator.");
    await after.getByRole("button", { name: "Enable Retired tool" }).waitFor();

    // The API agrees, for every client.
    const listed = (await (await stage.system.request("/v1/tools?available=false")).json()) as {
      tools: { id: string; reasons?: string[] }[];
    };
    expect(listed.tools.find((tool) => tool.id === "test_retired")?.reasons).toEqual(["disabled"]);

    // Its page says so too, and enabling it there brings it back.
    await openTool(page, "test_retired");
    await page.getByRole("heading", { level: 1, name: "Retired tool" }).waitFor();
    await page.getByText("Disabled on this stage by an administrator.").waitFor();
    await page.getByRole("button", { name: "Enable Retired tool" }).click();
    await page.getByRole("status").getByText("Retired tool is enabled on this stage.").waitFor();
    await page.getByRole("button", { name: "Disable Retired tool" }).waitFor();
    expect(await page.getByText("Disabled on this stage by an administrator.").count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("a tool's page", () => {
  it("runs readability_analyzer through its form, shows the API's errors by field and the result", async () => {
    const { page, problems } = await signedInPage(stage, member, { width: 390, height: 800 });
    await page.getByRole("link", { name: "Readability analyzer", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Readability analyzer" }).waitFor();
    await page.getByRole("heading", { name: "Guidelines" }).waitFor();
    // The schemas, folded until asked for.
    await page.getByText("Input schema", { exact: true }).click();
    await page.getByText('"minLength": 1').waitFor();
    const text = page.getByLabel("text");
    expect(await text.evaluate((element) => element.tagName)).toBe("TEXTAREA");
    expect(await text.getAttribute("aria-required")).toBe("true");

    // Empty: the API refuses it, and says so under the field.
    const refused = page.waitForResponse((response) => response.status() === 400);
    await page.getByRole("button", { name: "Call the tool" }).click();
    const emptyCall = new URL((await refused).url()).pathname;
    expect(emptyCall).toMatch(/^\/v1\/runs\/console-[0-9a-f]{16}\/calls$/);
    await page.locator("#try-text-error").waitFor();
    expect(await text.getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator("#try-text-error").textContent()).toMatch(/Too small|>=1/);

    await page
      .getByRole("button", { name: /Put this example in the form\W+Check a product announcement/ })
      .click();
    expect(await text.inputValue()).toContain("Today we are releasing version 2.0.");
    await page.getByRole("button", { name: "Call the tool" }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("succeeded", { exact: true }).waitFor();
    expect(await text.getAttribute("aria-invalid")).toBeNull();
    const structured = (await result.locator("pre.json").textContent()) ?? "";
    expect(JSON.parse(structured)).toMatchObject({
      sentences: 3,
      interpretation: expect.any(String),
      fleschReadingEase: expect.any(Number),
    });
    const timeline = result.getByRole("link", { name: "See the run's timeline" });
    const link = (await timeline.getAttribute("href")) ?? "";
    expect(link).toMatch(/^#\/runs\/console-[0-9a-f]{16}$/);
    // A real call under that run: its log has it.
    const events = await stage.system.events(link.slice("#/runs/".length));
    expect(events.map((event) => event.detailType)).toContain("ToolCallScheduled");
    expect(await horizontalOverflow(page)).toBe(0);
    // The one refusal is the empty call's, a 400, as it should be.
    expectOnly(problems, [`400 POST ${emptyCall}`]);
    await page.context().close();
  });

  it("builds a field for each kind of input and shows a JSON field's parse error as it is typed", async () => {
    const { page, problems } = await signedInPage(stage, member);
    await openTool(page, "test_echo");
    await page.getByRole("heading", { level: 1, name: "Echo" }).waitFor();
    const kind = (label: string) =>
      page
        .getByLabel(label)
        .evaluate((element) =>
          element.tagName === "INPUT" ? `input:${element.getAttribute("type")}` : element.tagName,
        );
    expect(await kind("message")).toBe("input:text");
    expect(await kind("times")).toBe("input:number");
    expect(await kind("loud")).toBe("input:checkbox");
    expect(await kind("tone")).toBe("SELECT");
    expect(await kind("tags")).toBe("TEXTAREA");
    expect(await page.locator("label[for=try-times]").textContent()).toContain("(required)");
    expect(await page.locator("label[for=try-tone]").textContent()).not.toContain("(required)");

    await page.getByLabel("message").fill("hello");
    await page.getByLabel("times").fill("2");
    await page.getByLabel("loud").check();
    await page.getByLabel("tone").selectOption("fancy");
    await page.getByLabel("tags").fill('["a", ');
    await page.locator("#try-tags-error").getByText("Not valid JSON").waitFor();
    // Not sent while a field cannot be read.
    await page.getByRole("button", { name: "Call the tool" }).click();
    expect(await page.getByRole("region", { name: "Result" }).count()).toBe(0);

    await page.getByLabel("tags").fill('["a", "b"]');
    expect(await page.locator("#try-tags-error").isHidden()).toBe(true);
    await page.getByRole("button", { name: "Call the tool" }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("HELLO HELLO (fancy)").waitFor();
    expect(JSON.parse((await result.locator("pre.json").textContent()) ?? "")).toEqual({
      said: "HELLO HELLO",
      tags: ["a", "b"],
    });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("offers the kinds of a union input to choose from, each with its own fields", async () => {
    const { page, problems } = await signedInPage(stage, member);
    await openTool(page, "rss_feed");
    await page.getByRole("heading", { level: 1, name: "RSS and Atom feeds" }).waitFor();
    const action = page.getByLabel("action");
    expect(await action.inputValue()).toBe('"get_configured"');
    expect(await page.getByLabel("url").count()).toBe(0);
    await action.selectOption({ label: "fetch — Read the feed at `url`." });
    await page.getByLabel("url").waitFor();
    expect(await page.getByLabel("limit").getAttribute("type")).toBe("number");

    // The chosen kind is sent with its fields: the API takes the input, and the tool answers.
    await action.selectOption({ index: 0 });
    await page.getByLabel("url").waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Call the tool" }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("failed", { exact: true }).waitFor();
    expect(await page.locator("[aria-invalid=true]").count()).toBe(0);
    expect((await result.getByRole("alert").textContent()) ?? "").toContain(
      "Failed: unavailable. No feed is configured on this stage",
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("shows an image a tool returns as an image", async () => {
    const { page, problems } = await signedInPage(stage, member);
    await openTool(page, "test_snapshot");
    await page.getByRole("heading", { level: 1, name: "Dashboard snapshot" }).waitFor();
    await page.getByText("This tool takes no input.").waitFor();
    await page.getByRole("button", { name: "Call the tool" }).click();
    const result = page.getByRole("region", { name: "Result" });
    const image = result.getByRole("img", { name: /Image the tool returned \(image\/png/ });
    await image.waitFor();
    expect(await image.getAttribute("class")).toBe("result");
    expect(await image.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    // Decoded, so the page's policy let it load.
    await page.waitForFunction('document.querySelector("img.result")?.complete');
    expect(
      await image.evaluate(
        (element) => (element as unknown as { naturalWidth: number }).naturalWidth,
      ),
    ).toBe(1);
    expect(await result.locator(".content-block pre").first().textContent()).toBe(
      "The dashboard at noon.",
    );
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("a call from the Try-it form", () => {
  it("that outlasts the request is polled until it finishes, then its result is shown", async () => {
    const { page, problems } = await signedInPage(stage, member);
    await openTool(page, "test_gate");
    await page.getByRole("heading", { level: 1, name: "Gate" }).waitFor();
    await page.getByRole("button", { name: "Call the tool" }).click();
    // The API answered 202 after its wait: the page says the call goes on, and where to follow it.
    const waiting = page.getByRole("link", { name: "Follow it on the run's timeline" });
    await waiting.waitFor();
    expect(await page.getByRole("region", { name: "Result" }).count()).toBe(0);
    await expect.poll(() => gates.length).toBe(1);
    gates[0]?.();
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("succeeded", { exact: true }).waitFor();
    expect(await result.getByText("The gate opened.").count()).toBe(1);
    expect(JSON.parse((await result.locator("pre.json").textContent()) ?? "")).toEqual({
      opened: true,
    });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("that waits long is read less and less often, then left to the run's timeline", async () => {
    const { page, problems } = await stage.page();
    await page.clock.install();
    await signIn(stage, page, member);
    await openTool(page, "test_gate");
    await page.getByRole("heading", { level: 1, name: "Gate" }).waitFor();
    const polls: string[] = [];
    page.on("request", (request) => {
      const { pathname } = new URL(request.url());
      if (request.method() === "GET" && /^\/v1\/runs\/[^/]+\/calls\/[^/]+$/.test(pathname)) {
        polls.push(pathname);
      }
    });
    const opened = gates.length;
    await page.getByRole("button", { name: "Call the tool" }).click();
    await page.getByRole("link", { name: "Follow it on the run's timeline" }).waitFor();
    await expect.poll(() => gates.length).toBe(opened + 1);
    // A minute, a second at a time: the reads back off (1, 2, 5, then 15 s), not one a second.
    for (let second = 0; second < 60; second += 1) {
      await page.clock.fastForward(1_000);
      await page.waitForTimeout(20);
    }
    expect(polls.length).toBeGreaterThan(2);
    expect(polls.length).toBeLessThan(10);
    // After five minutes the page stops reading and says the call goes on.
    const stopped = page.getByText("this page stopped checking after 5 min");
    for (let step = 0; step < 40 && (await stopped.count()) === 0; step += 1) {
      await page.clock.fastForward(16_000);
      await page.waitForTimeout(100);
    }
    await stopped.waitFor();
    expect(await page.getByRole("link", { name: "follow it on the run's timeline" }).count()).toBe(
      1,
    );
    const read = polls.length;
    await page.clock.fastForward(60_000);
    await page.waitForTimeout(100);
    expect(polls.length).toBe(read);
    gates[opened]?.();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("that fails shows its kind, message and what to do", async () => {
    const { page, problems } = await signedInPage(stage, member);
    await openTool(page, "test_refuses");
    await page.getByRole("heading", { level: 1, name: "Refuser" }).waitFor();
    await page.getByRole("button", { name: "Call the tool" }).click();
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("failed", { exact: true }).waitFor();
    const alert = (await result.getByRole("alert").textContent()) ?? "";
    expect(alert).toContain("Failed: upstream_error.");
    expect(alert).toContain("The upstream said no.");
    expect(alert).toContain("Stop using this tool for now");
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("with the keyboard alone", () => {
  it("finds a tool by searching, opens it and calls it", async () => {
    const { page, problems } = await signedInPage(stage, member);
    const focused = () =>
      page.evaluate<string>(
        "(() => { const e = document.activeElement; return [e.tagName, e.getAttribute('aria-label') ?? e.textContent?.trim() ?? '', e.id].join(':'); })()",
      );
    /** Presses Tab until the focus is on what `want` matches; fails after 40 presses. */
    const tabTo = async (want: RegExp) => {
      for (let presses = 0; presses < 40; presses++) {
        await page.keyboard.press("Tab");
        if (want.test(await focused())) return;
      }
      throw new Error(`Tab never reached ${want}; last focus ${await focused()}`);
    };
    // The page's heading has the focus; the search box is the next stop.
    await page.keyboard.press("Tab");
    expect(await focused()).toMatch(/^INPUT:.*:catalog-q$/);
    await page.keyboard.type("how easy is this text to read");
    await page.keyboard.press("Enter");
    await page.getByRole("region", { name: /Search results for/ }).waitFor();
    await tabTo(/^A:Readability analyzer:/);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Readability analyzer" }).waitFor();
    await tabTo(/^TEXTAREA:.*:try-text$/);
    await page.keyboard.type("The cat sat on the mat. It was warm there.");
    await tabTo(/^BUTTON:Call the tool:/);
    await page.keyboard.press("Enter");
    const result = page.getByRole("region", { name: "Result" });
    await result.getByText("succeeded", { exact: true }).waitFor();
    // The result's heading takes the focus, so the next Tab goes on from there.
    expect(await focused()).toMatch(/^H2:Result:call-result-title$/);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe("made to be read by everyone", () => {
  for (const width of [1280, 390]) {
    it(`has no serious accessibility finding and no sideways scroll at ${width} px, with search results, field errors and a result`, async () => {
      const { page, problems } = await signedInPage(stage, stage.system.adminKey, {
        width,
        height: 900,
      });
      const search = page.getByRole("searchbox", { name: "Search tools" });
      await search.fill("github issues");
      await search.press("Enter");
      await page.getByRole("heading", { name: "Matching tools left out" }).waitFor();
      expect(await seriousFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);

      await openTool(page, "test_echo");
      await page.getByRole("heading", { level: 1, name: "Echo" }).waitFor();
      await page.getByLabel("tags").fill("[");
      await page.locator("#try-tags-error").getByText("Not valid JSON").waitFor();
      expect(await seriousFindings(page)).toEqual([]);
      await page.getByLabel("tags").fill("");
      const refused = page.waitForResponse((response) => response.status() === 400);
      await page.getByRole("button", { name: "Call the tool" }).click();
      const incompleteCall = new URL((await refused).url()).pathname;
      expect(incompleteCall).toMatch(/^\/v1\/runs\/console-[0-9a-f]{16}\/calls$/);
      await page.locator("#try-times-error").waitFor();
      expect(await seriousFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);

      await openTool(page, "test_snapshot");
      await page.getByRole("heading", { level: 1, name: "Dashboard snapshot" }).waitFor();
      await page.getByRole("button", { name: "Call the tool" }).click();
      await page.getByRole("region", { name: "Result" }).getByRole("img").waitFor();
      expect(await seriousFindings(page)).toEqual([]);
      expect(await horizontalOverflow(page)).toBe(0);
      // The one refusal is the call without its required fields, a 400.
      expectOnly(problems, [`400 POST ${incompleteCall}`]);
      await page.context().close();
    });
  }
});
