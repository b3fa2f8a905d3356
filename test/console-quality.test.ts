import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ConsoleStage,
  horizontalOverflow,
  seriousFindings,
  signIn,
  startConsoleStage,
} from "./support/console";

/**
 * What every page of the console owes its readers, checked in Chromium: no serious or critical
 * finding of axe-core's accessibility rules, no horizontal scroll on a wide screen or a phone,
 * no refused load (the Content-Security-Policy would report one), and a flow done with the
 * keyboard alone.
 */

/** The pages, as an admin reaches them; each is checked at both widths. */
const PAGES = [
  "#/catalog",
  "#/tools/readability_analyzer",
  "#/runs",
  "#/approvals",
  "#/me",
  "#/admin/keys",
  "#/admin/toolsets",
  "#/admin/subscriptions",
  "#/admin/audit",
];
const WIDTHS = [1280, 390];

let stage: ConsoleStage;

beforeAll(async () => {
  stage = await startConsoleStage();
}, 60_000);
afterAll(() => stage?.stop());

/** Waits for the page's content (its h1) after a navigation. */
async function settled(page: Page): Promise<void> {
  await page.locator("main h1").first().waitFor();
  await page.locator("main .loading").waitFor({ state: "detached" });
}

describe("every page of the console", () => {
  for (const width of WIDTHS) {
    it(`has no serious accessibility finding and no horizontal scroll at ${width} px`, async () => {
      const { page, problems } = await stage.page({ width, height: 900 });
      await page.goto(`${stage.url}/console`);
      await page.getByRole("heading", { level: 1 }).waitFor();
      const report: Record<string, unknown> = {};
      const signInFindings = await seriousFindings(page);
      if (signInFindings.length) report["sign-in"] = signInFindings;
      const overflowAtSignIn = await horizontalOverflow(page);
      if (overflowAtSignIn > 0) report["sign-in overflow"] = overflowAtSignIn;
      await signIn(stage, page, stage.system.adminKey);
      for (const hash of PAGES) {
        await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
        await settled(page);
        const findings = await seriousFindings(page);
        if (findings.length) report[hash] = findings;
        const overflow = await horizontalOverflow(page);
        if (overflow > 0) report[`${hash} overflow`] = overflow;
      }
      expect(report).toEqual({});
      expect(problems).toEqual([]);
      await page.context().close();
    });
  }
});

describe("the keyboard alone", () => {
  it("signs in, finds a tool and opens it", async () => {
    const { page } = await stage.page();
    await page.goto(`${stage.url}/console`);
    await page.getByLabel("API key").waitFor();
    // Focus starts on the page: Tab reaches the key field first.
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.id")).toBe("credential");
    await page.keyboard.type(stage.system.adminKey);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();
    // The page's heading takes focus, so a screen reader announces where the person is.
    expect(await page.evaluate("document.activeElement?.tagName")).toBe("H1");
    let reached = false;
    for (let step = 0; step < 200 && !reached; step++) {
      await page.keyboard.press("Tab");
      reached = (await page.evaluate(
        `document.activeElement?.getAttribute("href") === "#/tools/readability_analyzer"`,
      )) as boolean;
    }
    expect(reached).toBe(true);
    await page.keyboard.press("Enter");
    await page.locator("main h1").filter({ hasNotText: "Catalog" }).waitFor();
    expect(page.url()).toContain("#/tools/readability_analyzer");
    await page.context().close();
  });
});
