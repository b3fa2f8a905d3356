import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type ApiServer, serveApi } from "@toolbus/local";
import { type Browser, chromium, type Page } from "playwright-core";
import { expect } from "vitest";
import { startTestToolbus, type TestToolbus, type TestToolbusOptions } from "./toolbus";

/**
 * The console under test: a Toolbus stage served over HTTP on loopback, and Debian's Chromium
 * driven by playwright-core (never a downloaded browser). `.ci/run` installs Chromium with apt
 * where it is missing; `TOOLBUS_CHROMIUM` points at another binary.
 */
export interface ConsoleStage {
  system: TestToolbus;
  /** The API's origin, e.g. http://127.0.0.1:34567. */
  url: string;
  browser: Browser;
  /** A fresh page (its own context: its own session storage) that records its problems. */
  page(options?: { width?: number; height?: number }): Promise<WatchedPage>;
  /** Creates a key with this role through the API; returns the key itself. */
  key(name: string, role: string): Promise<{ key: string; keyId: string }>;
  stop(): Promise<void>;
}

export interface WatchedPage {
  page: Page;
  /**
   * Script errors, loads the page's policy refused, requests that failed without an answer, and
   * answers of 400 or more as `<status> <method> <path>`: a test that expects a refusal looks for
   * it here (see `expectOnly`).
   */
  problems: string[];
}

/** The flags a headless Chromium needs on a machine with no network beyond loopback. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/** Debian's Chromium, headless, as playwright-core drives it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.TOOLBUS_CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
  });
}

export interface ConsoleStageOptions extends TestToolbusOptions {
  /** The API's port (default: a free one): a stage whose OAuth client names its redirect URI. */
  port?: number;
}

export async function startConsoleStage(options: ConsoleStageOptions = {}): Promise<ConsoleStage> {
  const { port = 0, ...toolbusOptions } = options;
  const system = await startTestToolbus(toolbusOptions);
  let api: ApiServer | undefined;
  let browser: Browser | undefined;
  try {
    api = await serveApi(system.app, { port });
    browser = await launchChromium();
  } catch (error) {
    await api?.close();
    await system.stop();
    throw error;
  }
  const opened = browser;
  const served = api;
  return {
    system,
    url: served.url,
    browser: opened,
    page(options) {
      return watchedPage(opened, served.url, options);
    },
    async key(name, role) {
      const response = await system.request("/v1/keys", { method: "POST", json: { name, role } });
      if (response.status !== 201) throw new Error(`key ${name}: ${response.status}`);
      return (await response.json()) as { key: string; keyId: string };
    },
    async stop() {
      await opened.close();
      await served.close();
      await system.stop();
    },
  };
}

/**
 * A fresh page of `browser` (its own context: its own session storage) that records its problems.
 * A URL is named by its path on the stage at `origin`, and in full elsewhere.
 */
async function watchedPage(
  browser: Browser,
  origin: string,
  { width = 1280, height = 900 }: { width?: number; height?: number } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const problems: string[] = [];
  const stageOrigin = new URL(origin).origin;
  const named = (address: string) => {
    const url = new URL(address);
    return url.origin === stageOrigin ? url.pathname : `${url.origin}${url.pathname}`;
  };
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    // A refused answer is recorded with its URL below; the browser's own line names none.
    if (message.type() !== "error" || message.text().startsWith("Failed to load resource")) {
      return;
    }
    problems.push(`console: ${message.text()}`);
  });
  page.on("response", (response) => {
    if (response.status() < 400) return;
    problems.push(`${response.status()} ${response.request().method()} ${named(response.url())}`);
  });
  page.on("requestfailed", (request) => {
    // Aborted is the page letting go of a request (a stream it no longer shows), not a failure;
    // a page of another origin in the tab (an issuer's sign-in) is not the console.
    const reason = request.failure()?.errorText ?? "failed";
    if (reason === "net::ERR_ABORTED") return;
    if (new URL(request.frame().url()).origin !== stageOrigin) return;
    problems.push(`failed ${request.method()} ${named(request.url())}: ${reason}`);
  });
  return { page, problems };
}

/**
 * The page's problems are exactly `expected`, in any order: each refusal the test caused shows
 * (e.g. `"403 GET /v1/keys"`), and nothing else went wrong. `expectOnly(problems, [])` is none.
 */
export function expectOnly(problems: readonly string[], expected: readonly string[]): void {
  expect([...problems].sort()).toEqual([...expected].sort());
}

/** Opens the console and signs in with the key; resolves once the catalog is shown. */
export async function signIn(stage: ConsoleStage, page: Page, key: string): Promise<void> {
  await page.goto(`${stage.url}/console`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();
}

/** A fresh page of the stage (see `ConsoleStage.page`), signed in with the key. */
export async function signedInPage(
  stage: ConsoleStage,
  key: string,
  options?: { width?: number; height?: number },
): Promise<WatchedPage> {
  const watched = await stage.page(options);
  await signIn(stage, watched.page, key);
  return watched;
}

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

/** One of axe-core's findings: the rule, its impact, and the elements it found. */
export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical findings on the page as it is now. axe is evaluated through
 * the browser's debugging protocol, which the page's policy does not govern: the console itself
 * still loads nothing but its own files.
 */
export async function seriousFindings(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(AXE_SOURCE);
  const found = (await page.evaluate(
    `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(" ")) })))`,
  )) as AxeFinding[];
  return found.filter((finding) => finding.impact === "serious" || finding.impact === "critical");
}

/** How far the page scrolls sideways (0 when it fits its window). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return (await page.evaluate(
    "document.documentElement.scrollWidth - document.documentElement.clientWidth",
  )) as number;
}
