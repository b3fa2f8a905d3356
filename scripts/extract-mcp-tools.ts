/**
 * Extracts the tool definitions of published MCP servers into test/fixtures/search-real/servers/.
 *
 *   node --import tsx scripts/extract-mcp-tools.ts              every server of the first set
 *   node --import tsx scripts/extract-mcp-tools.ts tavily-mcp   only the named packages
 *   node --import tsx scripts/extract-mcp-tools.ts --set heldout2 [packages…]
 *                                   the second, disjoint set → test/fixtures/search-real/heldout2/
 *   node --import tsx scripts/extract-mcp-tools.ts --set heldout3 [packages…]
 *                                   the third, disjoint set → test/fixtures/search-real/heldout3/
 *   node --import tsx scripts/extract-mcp-tools.ts --set heldout4 [packages…]
 *                                   the fourth, disjoint set → test/fixtures/search-real/heldout4/
 *
 * Run by hand, never by `npm test`: it installs packages from the npm registry. Each package is
 * installed (pinned version, install scripts off unless the entry says otherwise) into a temp
 * directory outside the repo, started as a stdio server with dummy credentials and a temp HOME,
 * asked for `tools/list` (every page) and stopped. The tools are written exactly as the server
 * sent them: the raw JSON-RPC results are recorded, not the SDK's parsed copy.
 *
 * Servers get no network: a preloaded module (NODE_OPTIONS=--require) makes every socket connect
 * fail as if refused and makes `fetch` reject, and browser downloads are switched off. A server
 * that needs the network, a browser or a real account just to list its tools fails and is skipped.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from "@modelcontextprotocol/sdk/client/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const run = promisify(execFile);

/** One published server: the package, its pinned version and how to start it. */
interface ServerEntry {
  package: string;
  version: string;
  /** The bin to run when the package has several; default: its only bin, or the one named like it. */
  bin?: string;
  /** Command-line arguments; `dir` is a scratch directory of this server's own. */
  args?: (dir: string) => string[];
  /** Environment on top of the defaults (dummy tokens only). */
  env?: (dir: string) => Record<string, string>;
  /** Run the package's install scripts (only when it cannot start without them). */
  installScripts?: boolean;
}

/** An address that is never reached: connects are refused before they leave the process. */
const NOWHERE = "127.0.0.1:1";

const SERVERS: ServerEntry[] = [
  {
    package: "@modelcontextprotocol/server-filesystem",
    version: "2026.8.31",
    args: (dir) => [join(dir, "files")],
  },
  {
    package: "@modelcontextprotocol/server-memory",
    version: "2026.8.31",
    env: (dir) => ({ MEMORY_FILE_PATH: join(dir, "memory.jsonl") }),
  },
  {
    package: "@modelcontextprotocol/server-github",
    version: "2025.4.8",
    env: () => ({ GITHUB_PERSONAL_ACCESS_TOKEN: "dummy" }),
  },
  {
    package: "@modelcontextprotocol/server-gitlab",
    version: "2025.4.25",
    env: () => ({
      GITLAB_PERSONAL_ACCESS_TOKEN: "dummy",
      GITLAB_API_URL: `http://${NOWHERE}/api/v4`,
    }),
  },
  {
    package: "@modelcontextprotocol/server-slack",
    version: "2025.4.25",
    env: () => ({ SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T0" }),
  },
  {
    package: "@modelcontextprotocol/server-postgres",
    version: "0.6.2",
    args: () => [`postgresql://dummy:dummy@${NOWHERE}/dummy`],
  },
  { package: "@modelcontextprotocol/server-puppeteer", version: "2025.5.12" },
  {
    package: "@modelcontextprotocol/server-google-maps",
    version: "0.6.2",
    env: () => ({ GOOGLE_MAPS_API_KEY: "dummy" }),
  },
  {
    package: "@modelcontextprotocol/server-brave-search",
    version: "0.6.2",
    env: () => ({ BRAVE_API_KEY: "dummy" }),
  },
  { package: "@modelcontextprotocol/server-sequential-thinking", version: "2026.8.31" },
  {
    package: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    args: () => ["stdio"],
  },
  {
    package: "@modelcontextprotocol/server-aws-kb-retrieval",
    version: "0.6.2",
    env: () => ({
      AWS_ACCESS_KEY_ID: "dummy",
      AWS_SECRET_ACCESS_KEY: "dummy",
      AWS_REGION: "us-east-1",
    }),
  },
  {
    package: "@modelcontextprotocol/server-everart",
    version: "0.6.2",
    env: () => ({ EVERART_API_KEY: "dummy" }),
  },
  {
    package: "@notionhq/notion-mcp-server",
    version: "2.5.2",
    env: () => ({ NOTION_TOKEN: "ntn_dummy" }),
  },
  { package: "tavily-mcp", version: "0.2.22", env: () => ({ TAVILY_API_KEY: "tvly-dummy" }) },
  { package: "exa-mcp-server", version: "3.4.1", env: () => ({ EXA_API_KEY: "dummy" }) },
  { package: "firecrawl-mcp", version: "3.26.0", env: () => ({ FIRECRAWL_API_KEY: "fc-dummy" }) },
  { package: "@upstash/context7-mcp", version: "4.1.1" },
  { package: "@playwright/mcp", version: "0.0.83", args: () => ["--headless", "--isolated"] },
  { package: "@executeautomation/playwright-mcp-server", version: "1.0.12" },
  {
    package: "@browserbasehq/mcp-server-browserbase",
    version: "2.4.3",
    env: () => ({
      BROWSERBASE_API_KEY: "dummy",
      BROWSERBASE_PROJECT_ID: "dummy",
      GEMINI_API_KEY: "dummy",
    }),
  },
  { package: "mcp-server-kubernetes", version: "4.1.7" },
  {
    package: "mongodb-mcp-server",
    version: "3.0.4",
    env: () => ({ MDB_MCP_TELEMETRY: "disabled" }),
  },
  {
    package: "@hubspot/mcp-server",
    version: "0.4.0",
    env: () => ({ PRIVATE_APP_ACCESS_TOKEN: "dummy" }),
  },
  {
    package: "linear-mcp-server",
    version: "0.1.0",
    env: () => ({ LINEAR_API_KEY: "lin_api_dummy" }),
  },
  { package: "@kazuph/mcp-taskmanager", version: "1.1.1" },
  {
    package: "@modelcontextprotocol/server-gdrive",
    version: "2025.1.14",
    env: (dir) => {
      const credentials = join(dir, "gdrive-credentials.json");
      writeFileSync(credentials, JSON.stringify({ access_token: "dummy", token_type: "Bearer" }));
      return { GDRIVE_CREDENTIALS_PATH: credentials };
    },
  },
  { package: "@cyanheads/git-mcp-server", version: "2.15.3" },
  {
    package: "@aashari/mcp-server-atlassian-jira",
    version: "3.3.0",
    env: () => ({
      ATLASSIAN_SITE_NAME: "dummy",
      ATLASSIAN_USER_EMAIL: "dummy@example.invalid",
      ATLASSIAN_API_TOKEN: "dummy",
    }),
  },
  {
    package: "airtable-mcp-server",
    version: "1.14.0",
    env: () => ({ AIRTABLE_API_KEY: "patDummy" }),
  },
  { package: "duckduckgo-mcp-server", version: "0.1.2" },
  { package: "@wonderwhy-er/desktop-commander", version: "0.2.52", bin: "desktop-commander" },
];

/**
 * Tried, and left out because they cannot list their tools offline or at all:
 * - @modelcontextprotocol/server-redis@2025.4.25 connects to Redis at startup and exits without it.
 * - @benborla29/mcp-server-mysql@2.0.9 connects to MySQL at startup and exits without it.
 * - @supabase/mcp-server-supabase@0.13.0 fetches supabase.com docs while listing.
 * - @stripe/mcp@0.3.3 asks Stripe's servers for its tool list.
 * - mcp-server-sqlite-npx@0.8.0 needs the native sqlite3 build its install script downloads.
 * - @heroku/mcp-server@1.2.8 fails to import its own SDK dependency (ERR_MODULE_NOT_FOUND).
 * - @modelcontextprotocol/server-sqlite is not on npm (it is the Python mcp-server-sqlite).
 * - @henkey/postgres-mcp-server (AGPL-3.0) and mcp-obsidian (no licence) were not tried.
 */

/**
 * The second, disjoint set (held-out evaluation): other servers doing the same jobs as the first
 * set's, so that queries written for them meet near-duplicate tools. None is in SERVERS.
 */
const HELDOUT2_SERVERS: ServerEntry[] = [
  {
    package: "@zereight/mcp-gitlab",
    version: "2.1.64",
    env: () => ({
      GITLAB_PERSONAL_ACCESS_TOKEN: "dummy",
      GITLAB_API_URL: `http://${NOWHERE}/api/v4`,
    }),
  },
  {
    package: "@aashari/mcp-server-atlassian-bitbucket",
    version: "3.1.0",
    env: () => ({
      ATLASSIAN_BITBUCKET_USERNAME: "dummy",
      ATLASSIAN_BITBUCKET_APP_PASSWORD: "dummy",
    }),
  },
  { package: "chrome-devtools-mcp", version: "1.11.0", args: () => ["--headless", "--isolated"] },
  { package: "@agent-infra/mcp-server-browser", version: "1.2.29", args: () => ["--headless"] },
  { package: "mcp-searxng", version: "2.4.0", env: () => ({ SEARXNG_URL: `http://${NOWHERE}` }) },
  {
    package: "@brave/brave-search-mcp-server",
    version: "2.1.4",
    env: () => ({ BRAVE_API_KEY: "dummy" }),
  },
  { package: "mcp-fetch-server", version: "1.1.2" },
  {
    package: "server-perplexity-ask",
    version: "0.1.3",
    env: () => ({ PERPLEXITY_API_KEY: "pplx-dummy" }),
  },
  {
    package: "@tacticlaunch/mcp-linear",
    version: "1.4.3",
    env: () => ({ LINEAR_API_TOKEN: "lin_api_dummy" }),
  },
  {
    package: "@roychri/mcp-server-asana",
    version: "1.8.0",
    env: () => ({ ASANA_ACCESS_TOKEN: "dummy" }),
  },
  {
    package: "@cablate/mcp-google-map",
    version: "0.0.63",
    args: () => ["--stdio"],
    env: () => ({ GOOGLE_MAPS_API_KEY: "dummy" }),
  },
  {
    package: "@mapbox/mcp-server",
    version: "0.14.0",
    env: () => ({ MAPBOX_ACCESS_TOKEN: "pk.eyJ1IjoiZHVtbXkifQ.dummy" }),
  },
  { package: "@openbnb/mcp-server-airbnb", version: "0.3.0", args: () => ["--ignore-robots-txt"] },
  {
    package: "@cocal/google-calendar-mcp",
    version: "2.6.3",
    env: (dir) => {
      const credentials = join(dir, "gcp-oauth.keys.json");
      writeFileSync(credentials, JSON.stringify(DUMMY_OAUTH_CLIENT));
      return { GOOGLE_OAUTH_CREDENTIALS: credentials };
    },
  },
  {
    package: "@gongrzhe/server-gmail-autoauth-mcp",
    version: "1.1.11",
    env: (dir) => {
      const keys = join(dir, "gcp-oauth.keys.json");
      const credentials = join(dir, "gmail-credentials.json");
      writeFileSync(keys, JSON.stringify(DUMMY_OAUTH_CLIENT));
      writeFileSync(
        credentials,
        JSON.stringify({ access_token: "dummy", refresh_token: "dummy", token_type: "Bearer" }),
      );
      return { GMAIL_OAUTH_PATH: keys, GMAIL_CREDENTIALS_PATH: credentials };
    },
  },
  { package: "mcp-discord", version: "1.3.4", env: () => ({ DISCORD_TOKEN: "dummy" }) },
  {
    package: "@zencoderai/slack-mcp-server",
    version: "0.0.1",
    env: () => ({ SLACK_BOT_TOKEN: "xoxb-dummy", SLACK_TEAM_ID: "T0" }),
  },
  { package: "@negokaz/excel-mcp-server", version: "0.12.0" },
  {
    package: "@pinecone-database/mcp",
    version: "0.3.0",
    env: () => ({ PINECONE_API_KEY: "dummy" }),
  },
  {
    package: "@itseasy21/mcp-knowledge-graph",
    version: "1.0.7",
    env: (dir) => ({ MEMORY_FILE_PATH: join(dir, "memory.jsonl") }),
  },
  {
    package: "@netlify/mcp",
    version: "1.15.1",
    env: () => ({ NETLIFY_PERSONAL_ACCESS_TOKEN: "dummy" }),
  },
  {
    package: "@cloudflare/mcp-server-cloudflare",
    version: "0.2.0",
    args: () => ["run", "dummy"],
    env: (dir) => {
      // Wrangler's login file, which the server reads at startup; the token is a dummy.
      const config = join(dir, "home", ".config", ".wrangler", "config");
      mkdirSync(config, { recursive: true });
      writeFileSync(
        join(config, "default.toml"),
        'oauth_token = "dummy"\nexpiration_time = "2999-01-01T00:00:00.000Z"\n',
      );
      return {};
    },
  },
];

/**
 * Tried for the second set, and left out:
 * - @doist/todoist-ai@9.0.0 does not install: it depends on @doist/todoist-mcp@^9.0.0, not on npm.
 * - @executeautomation/database-server@1.1.0 needs the native sqlite3 build (install scripts).
 * - @neondatabase/mcp-server-neon@0.6.5 does not install: a dependency is a GitHub tarball.
 */

/**
 * The third set (a second fresh held-out evaluation): more servers doing the same jobs as the
 * first two sets' (browsers, files, git hosting, databases, mail, notes, tasks, weather, cloud),
 * and a few new ones. None is in SERVERS or HELDOUT2_SERVERS.
 */
const HELDOUT3_SERVERS: ServerEntry[] = [
  {
    package: "@elastic/mcp-server-elasticsearch",
    version: "0.3.1",
    env: () => ({ ES_URL: `http://${NOWHERE}`, ES_API_KEY: "dummy" }),
  },
  {
    package: "@f4ww4z/mcp-mysql-server",
    version: "0.1.0",
    env: () => ({
      MYSQL_HOST: "127.0.0.1",
      MYSQL_PORT: "1",
      MYSQL_USER: "dummy",
      MYSQL_PASSWORD: "dummy",
      MYSQL_DATABASE: "dummy",
    }),
  },
  {
    package: "@delorenj/mcp-server-trello",
    version: "1.8.1",
    env: () => ({ TRELLO_API_KEY: "dummy", TRELLO_TOKEN: "dummy", TRELLO_BOARD_ID: "dummy" }),
  },
  // The Todoist token is read from a variable named just API_KEY.
  { package: "todoist-mcp", version: "1.3.4", env: () => ({ API_KEY: "dummy" }) },
  { package: "@dangahagan/weather-mcp", version: "1.23.0" },
  { package: "open-meteo-mcp-server", version: "2.1.0" },
  { package: "@h1deya/mcp-server-weather", version: "0.1.3" },
  {
    package: "mcp-gsheets",
    version: "1.10.3",
    env: (dir) => {
      const credentials = join(dir, "service-account.json");
      writeFileSync(credentials, JSON.stringify(DUMMY_SERVICE_ACCOUNT));
      return { GOOGLE_APPLICATION_CREDENTIALS: credentials, GOOGLE_PROJECT_ID: "dummy" };
    },
  },
  { package: "@kimtaeyoon83/mcp-server-youtube-transcript", version: "0.1.1" },
  { package: "@angiejones/mcp-selenium", version: "0.2.3" },
  { package: "@automatalabs/mcp-server-playwright", version: "1.2.1" },
  // The key is read from the command line, not from the environment.
  { package: "vercel-mcp", version: "0.0.7", args: () => ["VERCEL_API_KEY=dummy"] },
  {
    package: "@agent-infra/mcp-server-filesystem",
    version: "1.2.29",
    args: (dir) => ["--allowed-directories", join(dir, "files")],
  },
  {
    package: "github-mcp-server",
    version: "1.8.7",
    bin: "github-mcp-server-mcp",
    env: () => ({ GITHUB_TOKEN: "dummy" }),
  },
  {
    package: "@allpepper/memory-bank-mcp",
    version: "0.2.2",
    env: (dir) => ({ MEMORY_BANK_ROOT: join(dir, "files") }),
  },
  { package: "@antv/mcp-server-chart", version: "0.9.10" },
  {
    package: "@circleci/mcp-server-circleci",
    version: "0.20.0",
    env: () => ({ CIRCLECI_TOKEN: "dummy" }),
  },
  {
    package: "resend-mcp",
    version: "2.22.0",
    env: () => ({ RESEND_API_KEY: "re_dummy", SENDER_EMAIL_ADDRESS: "dummy@example.invalid" }),
  },
  { package: "attio-mcp", version: "1.6.1", env: () => ({ ATTIO_API_KEY: "dummy" }) },
  // Lists its tools without signing in to Microsoft Graph; calls would fail.
  { package: "@floriscornel/teams-mcp", version: "0.3.2" },
  { package: "mcp-git", version: "0.0.4" },
];

/**
 * Tried for the third set, and left out:
 * - @bytebase/dbhub@1.4.0 connects to its database at startup and exits without it.
 * - @gongrzhe/server-redis-mcp@1.0.0 connects to Redis at startup and exits without it.
 * - obsidian-mcp-server@3.2.12 does not install: it needs a version of a dependency not on npm.
 * - obsidian-mcp@2.0.1 refuses to start on Node.js 20 (it asks for a newer one).
 */

/**
 * The fourth set (a third fresh held-out evaluation): more servers doing the jobs of the first three
 * sets' (files, browsers, web search and fetching, databases, chat, docs, issue trackers, cloud,
 * calendars, mail, maps, memory), and a few new ones. None is in an earlier set.
 */
const HELDOUT4_SERVERS: ServerEntry[] = [
  {
    package: "fast-filesystem-mcp",
    version: "3.5.2",
    args: (dir) => ["--allow", join(dir, "files")],
  },
  { package: "puppeteer-mcp-server", version: "0.7.2" },
  { package: "fetcher-mcp", version: "0.3.9" },
  { package: "@mzxrai/mcp-webresearch", version: "0.1.7" },
  {
    package: "hyperbrowser-mcp",
    version: "1.0.25",
    env: () => ({ HYPERBROWSER_API_KEY: "hb_dummy" }),
  },
  { package: "jina-mcp-tools", version: "1.2.3", env: () => ({ JINA_API_KEY: "jina_dummy" }) },
  {
    package: "serper-search-scrape-mcp-server",
    version: "0.1.2",
    env: () => ({ SERPER_API_KEY: "dummy" }),
  },
  {
    package: "@perplexity-ai/mcp-server",
    version: "1.2.1",
    env: () => ({ PERPLEXITY_API_KEY: "pplx-dummy" }),
  },
  {
    package: "enhanced-postgres-mcp-server",
    version: "1.0.1",
    args: () => [`postgresql://dummy:dummy@${NOWHERE}/dummy`],
  },
  {
    package: "mcp-memory-libsql",
    version: "0.0.17",
    env: (dir) => ({ LIBSQL_URL: `file:${join(dir, "memory.db")}` }),
  },
  {
    package: "@answerai/confluence-mcp",
    version: "1.0.0",
    bin: "answerai-confluence-mcp",
    env: () => ({
      CONFLUENCE_BASE_URL: `http://${NOWHERE}`,
      CONFLUENCE_USER_EMAIL: "dummy@example.invalid",
      CONFLUENCE_API_TOKEN: "dummy",
    }),
  },
  {
    package: "notion-mcp-server",
    version: "1.0.1",
    env: () => ({ NOTION_TOKEN: "ntn_dummy", NOTION_PAGE_ID: "dummy" }),
  },
  {
    package: "@nexus2520/jira-mcp-server",
    version: "1.2.0",
    env: () => ({
      JIRA_BASE_URL: `http://${NOWHERE}`,
      JIRA_EMAIL: "dummy@example.invalid",
      JIRA_API_TOKEN: "dummy",
    }),
  },
  {
    package: "@tiberriver256/mcp-server-azure-devops",
    version: "0.1.48",
    env: () => ({
      AZURE_DEVOPS_ORG_URL: `http://${NOWHERE}/dummy`,
      AZURE_DEVOPS_AUTH_METHOD: "pat",
      AZURE_DEVOPS_PAT: "dummy",
    }),
  },
  { package: "motionmcp", version: "2.9.0", env: () => ({ MOTION_API_KEY: "dummy" }) },
  {
    package: "mcp-shrimp-task-manager",
    version: "1.0.21",
    env: (dir) => ({ DATA_DIR: join(dir, "files") }),
  },
  {
    package: "@shinzolabs/gmail-mcp",
    version: "1.7.4",
    env: (dir) => ({
      CLIENT_ID: "dummy.apps.googleusercontent.com",
      CLIENT_SECRET: "dummy",
      REFRESH_TOKEN: "dummy",
      MCP_CONFIG_DIR: join(dir, "files"),
      TELEMETRY_ENABLED: "false",
    }),
  },
  {
    package: "mcp-mail-server",
    version: "1.2.1",
    env: () => ({
      IMAP_HOST: "127.0.0.1",
      IMAP_PORT: "1",
      IMAP_SECURE: "false",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: "1",
      SMTP_SECURE: "false",
      EMAIL_USER: "dummy@example.invalid",
      EMAIL_PASS: "dummy",
    }),
  },
  {
    package: "@piotr-agier/google-drive-mcp",
    version: "2.10.0",
    env: () => ({ GOOGLE_DRIVE_MCP_ACCESS_TOKEN: "dummy" }),
  },
  {
    package: "@gongrzhe/server-travelplanner-mcp",
    version: "0.1.2",
    env: () => ({ GOOGLE_MAPS_API_KEY: "dummy" }),
  },
  // Only the droplets and spaces services: all of them together list 353 tools.
  {
    package: "@digitalocean/mcp",
    version: "1.0.70",
    args: () => ["--services", "droplets,spaces"],
    env: () => ({ DIGITALOCEAN_API_TOKEN: "dummy" }),
  },
  { package: "reddit-mcp-buddy", version: "1.1.14" },
  {
    package: "youtube-data-mcp-server",
    version: "1.0.16",
    env: () => ({ YOUTUBE_API_KEY: "dummy" }),
  },
  {
    package: "figma-developer-mcp",
    version: "0.13.2",
    args: () => ["--stdio"],
    env: () => ({ FIGMA_API_KEY: "dummy", FRAMELINK_TELEMETRY: "false" }),
  },
  { package: "@sylphx/pdf-reader-mcp", version: "2.4.0" },
];

/**
 * Tried for the fourth set, and left out:
 * - @j0hanz/filesystem-mcp@2.5.0 does not install: it needs a version of a dependency not on npm.
 * - @atlassian-dc-mcp/confluence@0.34.0 does not install: its sibling @atlassian-dc-mcp/common is
 *   not on npm.
 * - mcp-atlassian@2.1.0 exits at startup with ERR_MODULE_NOT_FOUND.
 * - mcp-mongo-server@3.0.1 and caldav-mcp@0.10.0 connect to their server at startup and exit
 *   without it.
 * - mcp-google-calendar@0.0.5 does not answer `tools/list` within the 60 s limit.
 * - slack-mcp-server@1.3.0 exits at once: its launcher fails to start the Go binary it wraps.
 */

/** A Google service-account key file shaped like a downloaded one; the key is not a real one. */
const DUMMY_SERVICE_ACCOUNT = {
  type: "service_account",
  project_id: "dummy",
  private_key_id: "dummy",
  private_key: "-----BEGIN PRIVATE KEY-----\ndummy\n-----END PRIVATE KEY-----\n",
  client_email: "dummy@dummy.iam.gserviceaccount.com",
  client_id: "0",
  token_uri: `http://${NOWHERE}/token`,
};

/** A Google OAuth client file shaped like a downloaded one; nothing here is real. */
const DUMMY_OAUTH_CLIENT = {
  installed: {
    client_id: "dummy.apps.googleusercontent.com",
    client_secret: "dummy",
    redirect_uris: ["http://localhost"],
  },
};

/** The sets the script can write, each with its own list and directory. */
const SETS: Record<string, { servers: ServerEntry[]; outDir: string }> = {
  servers: {
    servers: SERVERS,
    outDir: fileURLToPath(new URL("../test/fixtures/search-real/servers/", import.meta.url)),
  },
  heldout2: {
    servers: HELDOUT2_SERVERS,
    outDir: fileURLToPath(new URL("../test/fixtures/search-real/heldout2/", import.meta.url)),
  },
  heldout3: {
    servers: HELDOUT3_SERVERS,
    outDir: fileURLToPath(new URL("../test/fixtures/search-real/heldout3/", import.meta.url)),
  },
  heldout4: {
    servers: HELDOUT4_SERVERS,
    outDir: fileURLToPath(new URL("../test/fixtures/search-real/heldout4/", import.meta.url)),
  },
};

/** Per server: install, then listing. */
const INSTALL_TIMEOUT_MS = 300_000;
const LIST_TIMEOUT_MS = 60_000;
const CONCURRENCY = 4;

/** Loaded into every server process before its own code: no socket leaves, no fetch succeeds. */
const NO_NETWORK_PRELOAD = `"use strict";
const net = require("node:net");
const refuse = (what) => {
  const error = new Error("network disabled during tool extraction: " + what);
  error.code = "ECONNREFUSED";
  return error;
};
const describe = (args) => {
  const first = args[0];
  if (Array.isArray(first)) return describe(first);
  if (first && typeof first === "object") return String(first.path ?? (first.host ?? "localhost") + ":" + first.port);
  return args.filter((a) => typeof a !== "function").join(":");
};
net.Socket.prototype.connect = function connect(...args) {
  const what = describe(args);
  process.stderr.write("[extract] blocked connect to " + what + "\\n");
  this.connecting = true;
  process.nextTick(() => this.destroy(refuse(what)));
  return this;
};
globalThis.fetch = async (input) => {
  const what = typeof input === "string" ? input : (input && (input.url ?? input.href)) || "?";
  process.stderr.write("[extract] blocked fetch " + what + "\\n");
  throw new TypeError("fetch failed", { cause: refuse(what) });
};
`;

/** The file name for a package: `@scope/name` → `scope__name.json`. */
function fixtureName(pkg: string): string {
  return `${pkg.replace(/^@/, "").replace(/\//g, "__")}.json`;
}

interface InstalledPackage {
  version: string;
  license: string;
  binPath: string;
}

async function install(entry: ServerEntry, dir: string, npmEnv: NodeJS.ProcessEnv) {
  const prefix = join(dir, "install");
  mkdirSync(prefix, { recursive: true });
  const args = ["install", "--prefix", prefix, `${entry.package}@${entry.version}`];
  args.push("--no-audit", "--no-fund", "--no-save", "--loglevel=error");
  if (!entry.installScripts) args.push("--ignore-scripts");
  await run("npm", args, { env: npmEnv, timeout: INSTALL_TIMEOUT_MS, maxBuffer: 16 << 20 });
  const pkgDir = join(prefix, "node_modules", ...entry.package.split("/"));
  const manifest = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
    name: string;
    version: string;
    license?: unknown;
    bin?: string | Record<string, string>;
  };
  const bins: Record<string, string> =
    typeof manifest.bin === "string"
      ? { [manifest.name.split("/").pop() ?? manifest.name]: manifest.bin }
      : (manifest.bin ?? {});
  const names = Object.keys(bins);
  const wanted =
    entry.bin ??
    (names.length === 1 ? names[0] : names.find((n) => n === entry.package.split("/").pop()));
  const bin = wanted === undefined ? undefined : bins[wanted];
  if (bin === undefined) throw new Error(`no bin to run (bins: ${names.join(", ") || "none"})`);
  return {
    version: manifest.version,
    license:
      typeof manifest.license === "string"
        ? manifest.license
        : JSON.stringify(manifest.license ?? null),
    binPath: join(pkgDir, bin),
  } satisfies InstalledPackage;
}

/** Starts the server, lists every page of tools from the raw responses, stops it. */
async function listTools(
  entry: ServerEntry,
  dir: string,
  installed: InstalledPackage,
  stderrLog: string[],
  validationNotes: string[],
) {
  const home = join(dir, "home");
  mkdirSync(join(dir, "files"), { recursive: true });
  mkdirSync(home, { recursive: true });
  const preload = join(dir, "no-network.cjs");
  writeFileSync(preload, NO_NETWORK_PRELOAD);
  const env: Record<string, string> = {
    ...getDefaultEnvironment(),
    ...offlineEnv(dir),
    HOME: home,
    USERPROFILE: home,
    TMPDIR: join(dir, "files"),
    NODE_OPTIONS: `--require=${preload}`,
    ...entry.env?.(dir),
  };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [installed.binPath, ...(entry.args?.(dir) ?? [])],
    env,
    cwd: join(dir, "files"),
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderrLog.push(chunk.toString("utf8")));
  const client = new Client({ name: "toolbus-extract-mcp-tools", version: "0.0.0" });
  const raw = new Map<string | number, unknown>();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${LIST_TIMEOUT_MS / 1000} s`)),
      LIST_TIMEOUT_MS,
    );
  });
  try {
    const work = (async () => {
      await client.connect(transport);
      const onmessage = transport.onmessage;
      transport.onmessage = (message: JSONRPCMessage, extra?: unknown) => {
        if ("result" in message && "id" in message) raw.set(message.id, message.result);
        (onmessage as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(message, extra);
      };
      const tools: unknown[] = [];
      let cursor: string | undefined;
      const seen = new Set<string>();
      do {
        const before = new Set(raw.keys());
        // The SDK's own validation may reject a real server's schemas (e.g. an inputSchema
        // without "type": "object"); the raw result is what the server published, so keep it.
        const listed = await client
          .listTools(cursor === undefined ? {} : { cursor })
          .catch((error: unknown) => error);
        const id = [...raw.keys()].find((k) => !before.has(k));
        const result =
          id === undefined
            ? undefined
            : (raw.get(id) as { tools?: unknown[]; nextCursor?: unknown } | undefined);
        if (!Array.isArray(result?.tools)) {
          throw listed instanceof Error ? listed : new Error("no raw tools/list result recorded");
        }
        if (listed instanceof Error) validationNotes.push(firstLine(listed.message));
        tools.push(...result.tools);
        cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
        if (cursor !== undefined) {
          if (seen.has(cursor)) throw new Error(`pagination loops at cursor ${cursor}`);
          seen.add(cursor);
        }
      } while (cursor !== undefined);
      return tools;
    })();
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
  }
}

/** Browser and telemetry switches that keep packages from downloading or phoning home. */
function offlineEnv(dir: string): Record<string, string> {
  return {
    PLAYWRIGHT_BROWSERS_PATH: join(dir, "browsers"),
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
    PUPPETEER_SKIP_DOWNLOAD: "1",
    PUPPETEER_SKIP_CHROMIUM_DOWNLOAD: "1",
    PUPPETEER_CACHE_DIR: join(dir, "browsers"),
    DO_NOT_TRACK: "1",
    DISABLE_TELEMETRY: "1",
    NO_UPDATE_NOTIFIER: "1",
    npm_config_update_notifier: "false",
  };
}

interface Outcome {
  package: string;
  version: string;
  license?: string;
  tools?: number;
  error?: string;
  /** Kept, but the SDK client's validation rejected the list. */
  note?: string;
}

async function extract(entry: ServerEntry, root: string, outDir: string): Promise<Outcome> {
  const dir = mkdtempSync(join(root, `${fixtureName(entry.package).replace(/\.json$/, "")}-`));
  const npmEnv: NodeJS.ProcessEnv = { ...process.env, ...offlineEnv(dir) };
  let installed: InstalledPackage;
  try {
    installed = await install(entry, dir, npmEnv);
  } catch (error) {
    return { package: entry.package, version: entry.version, error: `install: ${message(error)}` };
  }
  const stderrLog: string[] = [];
  const validationNotes: string[] = [];
  try {
    const tools = await listTools(entry, dir, installed, stderrLog, validationNotes);
    if (tools.length === 0) throw new Error("listed no tools");
    const fixture = {
      package: entry.package,
      version: installed.version,
      extractedAt: new Date().toISOString(),
      tools,
    };
    // A server that names the directory it was started in (figma-developer-mcp's image
    // directory) would name this machine's scratch directory: written as <scratch> instead.
    writeFileSync(
      join(outDir, fixtureName(entry.package)),
      `${JSON.stringify(fixture, null, 2).replaceAll(realpathSync(dir), "<scratch>").replaceAll(dir, "<scratch>")}\n`,
    );
    return {
      package: entry.package,
      version: installed.version,
      license: installed.license,
      tools: tools.length,
      ...(validationNotes.length > 0 && { note: `SDK validation: ${validationNotes.join("; ")}` }),
    };
  } catch (error) {
    const tail = stderrLog.join("").trim().split("\n").slice(-8).join("\n    ");
    return {
      package: entry.package,
      version: installed.version,
      license: installed.license,
      error: `list: ${message(error)}${tail ? `\n    stderr: ${tail}` : ""}`,
    };
  }
}

function firstLine(text: string): string {
  return text.replace(/\s+/g, " ").slice(0, 200);
}

function message(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

async function main() {
  const argv = process.argv.slice(2);
  const setFlag = argv.findIndex((a) => a === "--set" || a.startsWith("--set="));
  let setName = "servers";
  if (setFlag !== -1) {
    const flag = argv[setFlag] ?? "";
    const inline = flag.startsWith("--set=");
    setName = inline ? flag.slice("--set=".length) : (argv[setFlag + 1] ?? "");
    argv.splice(setFlag, inline ? 1 : 2);
  }
  const set = SETS[setName];
  if (set === undefined) {
    throw new Error(`unknown set "${setName}" (sets: ${Object.keys(SETS).join(", ")})`);
  }
  const { servers, outDir } = set;
  const only = argv;
  const entries = only.length === 0 ? servers : servers.filter((s) => only.includes(s.package));
  const unknown = only.filter((name) => !servers.some((s) => s.package === name));
  if (unknown.length > 0) throw new Error(`not in the ${setName} list: ${unknown.join(", ")}`);
  mkdirSync(outDir, { recursive: true });
  const root = mkdtempSync(join(tmpdir(), "toolbus-mcp-extract-"));
  const outcomes: Outcome[] = [];
  const queue = [...entries];
  const worker = async () => {
    for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
      const outcome = await extract(entry, root, outDir);
      outcomes.push(outcome);
      const what = `${outcome.package}@${outcome.version}`;
      if (outcome.error === undefined)
        console.log(
          `ok    ${what}: ${outcome.tools} tools (${outcome.license})${outcome.note ? ` — ${outcome.note}` : ""}`,
        );
      else console.log(`FAIL  ${what}: ${outcome.error}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  // Only whitespace changes: the repo's formatter lays the JSON out so `npm run lint` passes.
  const biome = fileURLToPath(new URL("../node_modules/.bin/biome", import.meta.url));
  await run(biome, ["format", "--write", outDir], { maxBuffer: 16 << 20 });
  const ok = outcomes.filter((o) => o.error === undefined);
  const total = ok.reduce((sum, o) => sum + (o.tools ?? 0), 0);
  console.log(`\n${ok.length}/${outcomes.length} servers, ${total} tools.`);
  for (const o of [...outcomes].sort((a, b) => a.package.localeCompare(b.package))) {
    console.log(
      `${o.error === undefined ? "ok  " : "FAIL"}  ${o.package}@${o.version}  ${o.license ?? "?"}  ${o.tools ?? 0}`,
    );
  }
  if (ok.length < outcomes.length) process.exitCode = 1;
}

await main();
