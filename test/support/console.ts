import { type ApiServer, serveApi } from "@toolbus/local";
import { type Browser, chromium, type Page } from "playwright-core";
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
  /** Script errors and refused loads (a Content-Security-Policy violation among them). */
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

export async function startConsoleStage(options: TestToolbusOptions = {}): Promise<ConsoleStage> {
  const system = await startTestToolbus(options);
  let api: ApiServer | undefined;
  let browser: Browser | undefined;
  try {
    api = await serveApi(system.app, { port: 0 });
    browser = await chromium.launch({
      executablePath: process.env.TOOLBUS_CHROMIUM ?? "/usr/bin/chromium",
      args: CHROMIUM_ARGS,
    });
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
    async page({ width = 1280, height = 900 } = {}) {
      const context = await opened.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
      page.on("console", (message) => {
        // A 401 or 403 the console expects shows as a failed load; everything else is a problem.
        if (message.type() !== "error") return;
        if (/status of 40[13]/.test(message.text())) return;
        problems.push(`console: ${message.text()}`);
      });
      return { page, problems };
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

/** Opens the console and signs in with the key; resolves once the catalog is shown. */
export async function signIn(stage: ConsoleStage, page: Page, key: string): Promise<void> {
  await page.goto(`${stage.url}/console`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { level: 1, name: "Catalog" }).waitFor();
}
