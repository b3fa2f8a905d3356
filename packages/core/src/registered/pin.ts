import type { HeldReview, HeldToolChange } from "@toolbus/wire/model/registered";
import type { ToolSpec } from "@toolbus/wire/model/tool";
import { canonicalJson, sha256Hex } from "../util/canonical-json";
import type { RemoteTool } from "./mcp-client";

/**
 * Pinned definitions of a registered MCP server's tools. What the server declares for a tool
 * (its name, title, description, annotations, input and output schema), as Toolbus serves it,
 * is pinned when the toolset is registered. A refresh that finds the server declaring
 * something else holds the difference for review and keeps serving the pin; an administrator
 * accepts or rejects it. Everything else on a tool (availability, cost, cache, timeouts,
 * secrets, the generations the server speaks) is the administrator's or the transport's and
 * is never held.
 */

/** What a pin holds of a tool: the server's declaration, in the form Toolbus serves it. */
export function pinnedDefinition(tool: ToolSpec): Record<string, unknown> {
  return {
    name: remoteNameOf(tool),
    title: tool.title,
    description: tool.description,
    annotations: tool.annotations,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
  };
}

/** The server's own name for a tool: tools are matched by it, never by their id here. */
export function remoteNameOf(tool: ToolSpec): string {
  return tool.implementation.kind === "mcp" ? tool.implementation.remoteName : tool.id;
}

const fingerprint = (kind: HeldToolChange["change"], definition: Record<string, unknown>) =>
  sha256Hex(`${kind}\n${canonicalJson(definition)}`).slice(0, 32);

export interface HeldOutcome {
  /** The tools to serve: the pins where the server changed, the server's tools elsewhere. */
  served: ToolSpec[];
  /** Every difference from the pins, pending or rejected before; undefined when there is none. */
  review: HeldReview | undefined;
}

/**
 * Compares what the server declares now (`planned`, with the server's `remote` declarations)
 * with the pins (`pinned`, the tools served now). A tool whose definition is unchanged is
 * served as planned (so transport changes apply); a changed or removed one keeps its pin,
 * under the id the registration gives it now; an added one is not served. A difference the
 * previous review already held keeps its state (a rejected change stays rejected) and the
 * time it was first found.
 */
export function holdChanges(input: {
  pinned: readonly ToolSpec[];
  planned: readonly ToolSpec[];
  remote: readonly RemoteTool[];
  previous: HeldReview | undefined;
  protocols: readonly string[];
  now: string;
  /** Plans declarations with today's registration: how a removed tool's pin gets its fields. */
  plan: (declared: RemoteTool[]) => ToolSpec[];
}): HeldOutcome {
  const { pinned, planned, remote, previous, now } = input;
  const pins = new Map(pinned.map((tool) => [remoteNameOf(tool), tool]));
  const declarations = new Map(remote.map((tool) => [tool.name, tool]));
  const before = new Map((previous?.changes ?? []).map((change) => [change.remoteName, change]));
  const served: ToolSpec[] = [];
  const changes: HeldToolChange[] = [];

  const hold = (
    remoteName: string,
    change: HeldToolChange["change"],
    definition: Record<string, unknown>,
  ) => {
    const print = fingerprint(change, definition);
    const known = before.get(remoteName);
    const declared = declarations.get(remoteName);
    const held: HeldToolChange =
      known && known.fingerprint === print && known.change === change
        ? known
        : {
            remoteName,
            change,
            ...(change !== "removed" && declared
              ? { declared: declared as Record<string, unknown> }
              : {}),
            fingerprint: print,
            detectedAt: now,
            state: "pending",
          };
    changes.push(held);
  };

  for (const tool of planned) {
    const name = remoteNameOf(tool);
    const stored = pins.get(name);
    const definition = pinnedDefinition(tool);
    if (!stored) {
      hold(name, "added", definition);
      continue;
    }
    const pin = withTitleOfToday(stored, tool, declarations.get(name));
    if (canonicalJson(pinnedDefinition(pin)) === canonicalJson(definition)) {
      served.push(tool);
    } else {
      hold(name, "changed", definition);
      served.push(withTransportOf(pin, tool));
    }
  }
  const listed = new Set(planned.map(remoteNameOf));
  const removed = [...pins.values()].filter((pin) => !listed.has(remoteNameOf(pin)));
  const replanned = new Map(
    input.plan(removed.map(declarationOf)).map((tool) => [remoteNameOf(tool), tool]),
  );
  for (const pin of removed) {
    const name = remoteNameOf(pin);
    hold(name, "removed", pinnedDefinition(pin));
    // Still the administrator's: the registration's fields as they are now, its availability.
    const today = replanned.get(name);
    served.push(today ? { ...withTransportOf(pin, today), availability: pin.availability } : pin);
  }
  changes.sort((a, b) => (a.remoteName < b.remoteName ? -1 : a.remoteName > b.remoteName ? 1 : 0));
  return {
    served,
    review: changes.length > 0 ? { changes, protocols: [...input.protocols] } : undefined,
  };
}

/**
 * A pin made before untitled tools got a title read from their name (plan.ts `humanTitle`)
 * has the server's name as its title. That title was Toolbus's, not the server's: while the
 * server still gives none, the pin takes today's, so the new title alone is never a change
 * held for review (the refresh's diff lists such tools as changed, once).
 */
function withTitleOfToday(
  pin: ToolSpec,
  planned: ToolSpec,
  declared: RemoteTool | undefined,
): ToolSpec {
  const untitled = declared?.title === undefined && declared?.annotations?.title === undefined;
  const fromName = pin.title === remoteNameOf(pin).slice(0, 120);
  return untitled && fromName && planned.title !== pin.title
    ? { ...pin, title: planned.title }
    : pin;
}

/**
 * A pinned tool served on while its change waits: its definition stays; its id (a rename is
 * the administrator's), availability and the rest of the registration's fields, and the
 * generations the server speaks, are today's.
 */
function withTransportOf(pin: ToolSpec, planned: ToolSpec): ToolSpec {
  const definition = {
    title: pin.title,
    description: pin.description,
    usageHint: pin.usageHint,
    annotations: pin.annotations,
    inputSchema: pin.inputSchema,
    version: pin.version,
  };
  const { outputSchema: _planned, ...rest } = planned;
  return {
    ...rest,
    ...definition,
    ...(pin.outputSchema ? { outputSchema: pin.outputSchema } : {}),
    implementation:
      planned.implementation.kind === "mcp" && pin.implementation.kind === "mcp"
        ? { ...planned.implementation, remoteName: pin.implementation.remoteName }
        : pin.implementation,
  };
}

/** A served tool's definition as a server would declare it: to plan it again. */
function declarationOf(tool: ToolSpec): RemoteTool {
  return {
    name: remoteNameOf(tool),
    title: tool.title,
    description: tool.description,
    inputSchema: tool.inputSchema as RemoteTool["inputSchema"],
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as RemoteTool["outputSchema"] } : {}),
    annotations: {
      readOnlyHint: tool.annotations.readOnly,
      openWorldHint: tool.annotations.openWorld,
      idempotentHint: tool.annotations.idempotent,
    },
  };
}

/** One difference between two JSON values, at a JSON Pointer; absent sides are absent. */
export interface FieldChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

/** Nesting below this is reported as one change of the whole value. */
const MAX_DIFF_DEPTH = 32;

/**
 * Where two JSON values differ, as JSON Pointers, at most `limit` of them (then `truncated`).
 * Objects are compared key by key; arrays of the same length item by item, otherwise whole.
 * Each node is visited once: linear in the size of the values.
 */
export function jsonChanges(
  before: unknown,
  after: unknown,
  limit = 100,
): { changes: FieldChange[]; truncated: boolean } {
  const changes: FieldChange[] = [];
  let truncated = false;
  const report = (change: FieldChange) => {
    if (changes.length < limit) changes.push(change);
    else truncated = true;
  };
  const walk = (a: unknown, b: unknown, path: string, depth: number): void => {
    if (a === b) return;
    const bothObjects = isObject(a) && isObject(b);
    const bothArrays = Array.isArray(a) && Array.isArray(b) && a.length === b.length;
    if (depth < MAX_DIFF_DEPTH && bothObjects) {
      const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
      for (const key of keys) {
        const at = `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
        if (!(key in a)) report({ path: at, after: b[key] });
        else if (!(key in b)) report({ path: at, before: a[key] });
        else walk(a[key], b[key], at, depth + 1);
      }
      return;
    }
    if (depth < MAX_DIFF_DEPTH && bothArrays) {
      a.forEach((item, index) => {
        walk(item, b[index], `${path}/${index}`, depth + 1);
      });
      return;
    }
    if (canonicalJson(a) !== canonicalJson(b)) report({ path, before: a, after: b });
  };
  walk(before, after, "", 0);
  return { changes, truncated };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A held change as an administrator reviews it: by the id the tool has here, field by field. */
export interface HeldChangeView {
  id: string;
  remoteName: string;
  change: HeldToolChange["change"];
  state: HeldToolChange["state"];
  detectedAt: string;
  /** From the pinned definition to the server's; an added tool's fields are all new. */
  fields: FieldChange[];
  truncated: boolean;
}

/**
 * The review of a toolset's held changes. `plan` turns the server's declarations into tools
 * as the registration stands today (the same planning a refresh does), so an added tool shows
 * the id and definition it would be served with.
 */
export function describeReview(
  review: HeldReview | undefined,
  served: readonly ToolSpec[],
  plan: (declared: RemoteTool[]) => ToolSpec[],
): HeldChangeView[] {
  if (!review) return [];
  const pins = new Map(served.map((tool) => [remoteNameOf(tool), tool]));
  const planned = new Map(
    plan(review.changes.flatMap((change) => (change.declared ? [asRemote(change)] : []))).map(
      (tool) => [remoteNameOf(tool), tool],
    ),
  );
  return review.changes.map((change) => {
    const pin = pins.get(change.remoteName);
    const next = planned.get(change.remoteName);
    const tool = next ?? pin;
    const { changes, truncated } = jsonChanges(
      pin && change.change !== "added" ? pinnedDefinition(pin) : {},
      next && change.change !== "removed" ? pinnedDefinition(next) : {},
    );
    return {
      id: tool?.id ?? change.remoteName,
      remoteName: change.remoteName,
      change: change.change,
      state: change.state,
      detectedAt: change.detectedAt,
      fields: changes,
      truncated,
    };
  });
}

/**
 * Serves the chosen pending changes: a changed tool takes the server's definition, an added
 * one joins, a removed one leaves; what was not chosen stays held as it was. The caller then
 * gives each tool its availability (withAvailability), as for any registration.
 */
export function applyHeld(input: {
  served: readonly ToolSpec[];
  review: HeldReview;
  chosen: ReadonlySet<string>;
  plan: (declared: RemoteTool[]) => ToolSpec[];
}): { tools: ToolSpec[]; remaining: HeldReview | undefined; accepted: HeldToolChange[] } {
  const { served, review, chosen, plan } = input;
  const accepted = review.changes.filter(
    (change) => change.state === "pending" && chosen.has(change.remoteName),
  );
  const names = new Set(accepted.map((change) => change.remoteName));
  const incoming = plan(accepted.flatMap((change) => (change.declared ? [asRemote(change)] : [])));
  const tools = [...served.filter((tool) => !names.has(remoteNameOf(tool))), ...incoming];
  const left = review.changes.filter((change) => !names.has(change.remoteName));
  return {
    tools,
    remaining: left.length > 0 ? { ...review, changes: left } : undefined,
    accepted,
  };
}

/** Marks the chosen pending changes rejected: the pins stay, and the same change is not held again. */
export function rejectHeld(
  review: HeldReview,
  chosen: ReadonlySet<string>,
): { review: HeldReview; rejected: HeldToolChange[] } {
  const rejected: HeldToolChange[] = [];
  const changes = review.changes.map((change) => {
    if (change.state !== "pending" || !chosen.has(change.remoteName)) return change;
    const next = { ...change, state: "rejected" as const };
    rejected.push(next);
    return next;
  });
  return { review: { ...review, changes }, rejected };
}

const asRemote = (change: HeldToolChange) => change.declared as unknown as RemoteTool;
