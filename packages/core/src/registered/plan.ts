import {
  isConnectionHeader,
  type SecretHeader,
  secretCapabilityName,
  secretOfAuth,
} from "@toolbus/wire/model/implementation";
import type {
  CatalogDiff,
  HttpToolsetRegistration,
  McpToolsetRegistration,
  ToolsetRegistration,
} from "@toolbus/wire/model/registered";
import { type ToolSpec, type ToolsetSpec, toolSpec } from "@toolbus/wire/model/tool";
import { connectionSecret } from "../connections/credentials";
import { ValidationError } from "../errors";
import { canonicalJson, sha256Hex } from "../util/canonical-json";
import { claimsOf, clashError, idClaims, idClashes } from "./clashes";
import { compileSchema, SchemaError, schemaIssues } from "./json-schema";
import type { RemoteTool } from "./mcp-client";
import { parseUrlTemplate } from "./url-template";

/**
 * Pure planning of a registration: from what was registered (and, for MCP, what the server
 * listed) to the catalog entries to store. Every problem is a ValidationError or a
 * ConflictError naming the field or both owners; nothing here touches storage.
 */

/** What a tool without a declared output schema returns from a remote MCP server. */
const VERSION_LENGTH = 12;
const contentVersion = (value: unknown) => sha256Hex(canonicalJson(value)).slice(0, VERSION_LENGTH);

export function httpToolsetPlan(registration: HttpToolsetRegistration): {
  toolset: ToolsetSpec;
  tools: ToolSpec[];
} {
  const tools = registration.tools.map((tool, index) => {
    const at = `tools.${index}`;
    const {
      method,
      url,
      auth: ownAuth,
      inputSchema,
      outputSchema,
      version,
      annotations,
      ...catalog
    } = tool;
    checkInputSchema(inputSchema, `${at}.inputSchema`);
    checkSchema(outputSchema, `${at}.outputSchema`);
    let template: ReturnType<typeof parseUrlTemplate>;
    try {
      template = parseUrlTemplate(url);
    } catch (error) {
      throw invalid(
        `${at}.url`,
        `The URL template of ${tool.id} is not usable: ${(error as Error).message}`,
      );
    }
    checkPlaceholders(template, inputSchema, tool.id, `${at}.url`);
    tool.examples.forEach((example, n) => {
      const issues = schemaIssues(inputSchema, example.input);
      if (issues.length > 0) {
        throw invalid(
          `${at}.examples.${n}.input`,
          `Example "${example.title}" of ${tool.id} does not match its input schema: ${issues[0]?.path} ${issues[0]?.message}.`,
        );
      }
    });
    const auth = ownAuth ?? registration.auth;
    const implementation = { kind: "http" as const, method, url, ...(auth ? { auth } : {}) };
    return parseSpec(
      {
        ...catalog,
        toolset: registration.name,
        annotations: annotations ?? {
          readOnly: method === "GET",
          openWorld: true,
          idempotent: method === "GET" || method === "PUT" || method === "DELETE",
        },
        requires: requirements(auth),
        setup: secretSetup(auth),
        ...actingCredentials(auth),
        inputSchema,
        outputSchema,
        version: version ?? contentVersion({ implementation, inputSchema, outputSchema }),
        implementation,
      },
      at,
    );
  });
  // Every id listed twice, at once (registering checks these before planning, with the catalog's).
  const empty = { toolsets: [], tools: [] };
  const repeated = idClashes({
    toolset: registration,
    claims: idClaims(registration, [], snakeCase),
    catalog: empty,
  });
  if (repeated.length > 0) throw clashError(repeated, false);
  return {
    toolset: {
      name: registration.name,
      description: registration.description,
      owner: registration.owner,
      kind: "http",
    },
    tools,
  };
}

export function mcpToolsetPlan(
  registration: McpToolsetRegistration,
  remote: readonly RemoteTool[],
): { toolset: ToolsetSpec; tools: ToolSpec[] } {
  const { defaults, auth } = registration;
  // Every unusable id and every id two remote tools would share, at once, each with a rename.
  const clashes = idClashes({
    toolset: registration,
    claims: idClaims(registration, remote, snakeCase),
    catalog: { toolsets: [], tools: [] },
  });
  if (clashes.length > 0) throw clashError(clashes, false);
  const tools = remote.map((tool) => {
    const at = `remote tool ${tool.name}`;
    const id = registration.renames[tool.name] ?? snakeCase(tool.name);
    const inputSchema = tool.inputSchema as Record<string, unknown>;
    // The server's own output schema, or none: its answer is then its content blocks.
    const outputSchema = tool.outputSchema as Record<string, unknown> | undefined;
    checkInputSchema(inputSchema, `${at}: inputSchema`);
    if (outputSchema) checkSchema(outputSchema, `${at}: outputSchema`);
    const description =
      tool.description?.trim() || `${tool.name}, a tool of the MCP server ${registration.name}.`;
    const hints = tool.annotations ?? {};
    const implementation = {
      kind: "mcp" as const,
      url: registration.url,
      ...(auth ? { auth } : {}),
      remoteName: tool.name,
      ...(tool.execution?.taskSupport === "required" ? { remoteTaskRequired: true } : {}),
    };
    return parseSpec(
      {
        id,
        toolset: registration.name,
        // The server's own title; without one, its name read as words ("Create issue").
        title: (tool.title ?? hints.title ?? humanTitle(tool.name)).slice(0, 120),
        description: description.slice(0, 2000),
        category: defaults.category,
        usageHint: (defaults.usageHint ?? firstSentence(description)).slice(0, 500),
        ...(defaults.guidelines ? { guidelines: defaults.guidelines } : {}),
        requires: requirements(auth),
        setup: secretSetup(auth),
        ...actingCredentials(auth),
        inputSchema,
        ...(outputSchema ? { outputSchema } : {}),
        ...(defaults.cache ? { cache: defaults.cache } : {}),
        ...(defaults.rateLimit ? { rateLimit: defaults.rateLimit } : {}),
        ...(defaults.availability ? { availability: defaults.availability } : {}),
        timeoutMs: defaults.timeoutMs,
        ...(defaults.cost !== undefined ? { cost: defaults.cost } : {}),
        ...(defaults.taskSupport?.[tool.name]
          ? { taskSupport: defaults.taskSupport[tool.name] }
          : {}),
        // MCP's defaults when a hint is absent: may write, not idempotent, reaches the world.
        annotations: {
          readOnly: hints.readOnlyHint ?? false,
          openWorld: hints.openWorldHint ?? true,
          idempotent: hints.idempotentHint ?? false,
        },
        // A changed remote tool gets a new version, so cached results of the old one go unused.
        version: contentVersion({ tool, implementation }),
        implementation,
      },
      at,
    );
  });
  return {
    toolset: {
      name: registration.name,
      description: registration.description,
      owner: registration.owner,
      kind: "mcp",
      source: {
        url: registration.url,
        ...(auth ? { auth } : {}),
        renames: registration.renames,
        defaults,
        updates: registration.updates,
      },
    },
    tools,
  };
}

/**
 * Refuses ids another toolset owns, naming both owners and a free id to give instead: every
 * clash at once (registered/clashes.ts). A toolset may always keep its own ids. A 400, not a
 * 409: the registration as sent can never succeed; it has to change (a rename), not be retried.
 */
export function checkIdsFree(
  toolset: ToolsetSpec,
  tools: readonly ToolSpec[],
  catalog: { toolsets: readonly ToolsetSpec[]; tools: readonly ToolSpec[] },
): void {
  const clashes = idClashes({ toolset, claims: claimsOf(toolset, tools), catalog });
  if (clashes.length > 0) throw clashError(clashes, false);
}

/**
 * Who may use each planned tool. What the registration states (an MCP server's
 * `defaults.availability`, an http tool's `availability`) applies; when it states nothing, a
 * tool already in the catalog keeps its availability and a new one is offered to `adminsOnly`
 * (the stage's highest role) until an administrator widens it. With `keepAvailability` (a
 * refresh) every existing tool keeps its own whatever the stored registration states, so an
 * administrator's per-tool choice is never undone behind their back. An administrator's
 * disable survives re-registration and refresh, as it survives a seed.
 */
export function withAvailability(
  registration: ToolsetRegistration,
  planned: readonly ToolSpec[],
  before: readonly ToolSpec[],
  { adminsOnly, keepAvailability }: { adminsOnly: string; keepAvailability: boolean },
): ToolSpec[] {
  const previous = new Map(before.map((tool) => [tool.id, tool.availability]));
  const stating = new Set(
    registration.kind === "mcp"
      ? registration.defaults.availability
        ? planned.map((tool) => tool.id)
        : []
      : registration.tools.filter((tool) => tool.availability).map((tool) => tool.id),
  );
  return planned.map((tool) => {
    const kept = previous.get(tool.id);
    const states = stating.has(tool.id) && !(keepAvailability && kept);
    const availability = states
      ? tool.availability
      : (kept ?? { enabled: true, minRole: adminsOnly });
    return {
      ...tool,
      availability: kept?.enabled === false ? { ...availability, enabled: false } : availability,
    };
  });
}

/** Tool ids added, removed, changed and unchanged between two versions of a toolset. */
export function diffTools(before: readonly ToolSpec[], after: readonly ToolSpec[]): CatalogDiff {
  const comparable = (tool: ToolSpec) => {
    const {
      revision: _r,
      updatedAt: _u,
      ...spec
    } = tool as ToolSpec & {
      revision?: number;
      updatedAt?: string;
    };
    return canonicalJson(spec);
  };
  const old = new Map(before.map((tool) => [tool.id, comparable(tool)]));
  const now = new Set(after.map((tool) => tool.id));
  const diff: CatalogDiff = { added: [], removed: [], changed: [], unchanged: [] };
  for (const tool of after) {
    const previous = old.get(tool.id);
    if (previous === undefined) diff.added.push(tool.id);
    else if (previous === comparable(tool)) diff.unchanged.push(tool.id);
    else diff.changed.push(tool.id);
  }
  for (const tool of before) if (!now.has(tool.id)) diff.removed.push(tool.id);
  for (const list of Object.values(diff)) list.sort();
  return diff;
}

/** `getWeather`, `get-weather`, `Get Weather` -> `get_weather`; "" when no id fits. */
export function snakeCase(name: string): string {
  const id = name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  return /^[a-z][a-z0-9_]{0,47}$/.test(id) ? id : "";
}

/**
 * A tool name read as words, for a title the server did not give: `create_issue` -> "Create
 * issue", `slackListChannels` -> "Slack list channels", `HTTPStatus` -> "HTTP status". Words
 * in capitals (acronyms) keep them; the rest are lowercased, the first capitalized. The name
 * itself when it has no word.
 */
export function humanTitle(name: string): string {
  const words = name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
    .map((word) => (word.length > 1 && word === word.toUpperCase() ? word : word.toLowerCase()));
  const [first, ...rest] = words;
  if (first === undefined) return name;
  return [first.charAt(0).toUpperCase() + first.slice(1), ...rest].join(" ");
}

/** Secret names a registration references, once each: a header sending callers' own tokens names none. */
export function secretsOf(auths: readonly (SecretHeader | undefined)[]): string[] {
  return [...new Set(auths.flatMap((auth) => secretOfAuth(auth) ?? []))].sort();
}

/** The network, and the stage's secret when the header sends one; a caller's token is checked per call. */
function requirements(auth: SecretHeader | undefined): string[] {
  const secret = secretOfAuth(auth);
  return ["network", ...(secret ? [secretCapabilityName(secret)] : [])];
}

function secretSetup(auth: SecretHeader | undefined) {
  if (!auth) return [];
  if (isConnectionHeader(auth)) {
    return [
      {
        name: `${auth.provider} connection`,
        description: `Each caller's own ${auth.provider} access token is sent as the ${auth.header} header: a caller connects their ${auth.provider} account once (POST /v1/connections/${auth.provider}).`,
        required: true,
      },
    ];
  }
  return [
    {
      name: auth.secret,
      description: `Sent as the ${auth.header} header of every request.`,
      env: auth.secret,
      secret: auth.secret,
      required: true,
    },
  ];
}

/** A tool sending its caller's own token acts as its caller (runtime/policies.ts reads this). */
function actingCredentials(auth: SecretHeader | undefined) {
  if (!auth || !isConnectionHeader(auth)) return {};
  return {
    credentials: {
      provider: auth.provider,
      scopes: auth.scopes ?? [],
      mode: "user" as const,
      secret: connectionSecret(auth.provider),
    },
  };
}

function checkSchema(schema: Record<string, unknown>, at: string): void {
  try {
    compileSchema(schema);
  } catch (error) {
    if (error instanceof SchemaError)
      throw invalid(at, `The schema at ${at} is refused. ${error.message}`);
    throw error;
  }
}

/** Tools take an object: MCP and the selection both describe input as named fields. */
function checkInputSchema(schema: Record<string, unknown>, at: string): void {
  if (schema.type !== "object") {
    throw invalid(at, `The input schema at ${at} must have "type": "object" at its root.`);
  }
  checkSchema(schema, at);
}

/** Every placeholder names a declared field; path ones must be required (a path has no gaps). */
function checkPlaceholders(
  template: ReturnType<typeof parseUrlTemplate>,
  inputSchema: Record<string, unknown>,
  id: string,
  at: string,
): void {
  const properties = (inputSchema.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required : []);
  for (const name of [...template.path, ...template.query.values()]) {
    if (!(name in properties)) {
      throw invalid(
        at,
        `The URL of ${id} uses {${name}}, which its input schema does not declare.`,
      );
    }
  }
  for (const name of template.path) {
    if (!required.has(name)) {
      throw invalid(
        at,
        `{${name}} is in the path of ${id}'s URL, so the input schema must list it as required.`,
      );
    }
  }
}

function parseSpec(candidate: Record<string, unknown>, at: string): ToolSpec {
  const parsed = toolSpec.safeParse(candidate);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw invalid(at, `${at} does not make a valid tool: ${issue?.path.join(".")} ${issue?.message}`);
}

function firstSentence(text: string): string {
  const sentence = /^.*?[.!?](\s|$)/s.exec(text)?.[0] ?? text;
  return sentence.trim();
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(message, { details: [{ path, message }] });
}
