import type { ToolsetSpec } from "@toolbus/wire/model/tool";
import { ConflictError, ValidationError } from "../../errors";

/** What a write asks to become: a toolset name, of one kind, for one owner. */
export type ToolsetClaim = Pick<ToolsetSpec, "name" | "kind" | "owner">;

/**
 * Toolset names are global, so a write may only replace a toolset it owns, of the same kind:
 * another owner's toolset is a clash, not something to overwrite, and built-in toolsets
 * (written with the catalog API) and registered ones (http / mcp, written whole by the
 * registration API) never take each other's names. Every catalog write checks this here.
 */
export function checkToolsetClaim(current: ToolsetSpec | undefined, claim: ToolsetClaim): void {
  const refusal = toolsetClaimRefusal(current, claim);
  if (refusal) throw refusal.error;
}

/**
 * Why a write may not claim a toolset name (see `checkToolsetClaim`), without throwing:
 * `taken` when the name is a built-in's or another owner's, which a registration reports with
 * its other clashes (registered/clashes.ts); a change of kind is refused on its own.
 */
export function toolsetClaimRefusal(
  current: ToolsetSpec | undefined,
  claim: ToolsetClaim,
): { error: ConflictError | ValidationError; taken: boolean } | undefined {
  if (!current) return undefined;
  const details = { toolset: current.name, registeredBy: current.owner, requestedBy: claim.owner };
  if (claim.kind === "builtin" && current.kind !== "builtin") {
    return { error: registeredElsewhere("toolset", current.name), taken: false };
  }
  if (claim.kind !== "builtin" && current.kind === "builtin") {
    const error = new ConflictError(
      `Toolset ${current.name} is built in (owner ${current.owner}); owner ${claim.owner} cannot register a toolset of that name.`,
      { details },
    );
    return { error, taken: true };
  }
  if (current.owner !== claim.owner) {
    const error = new ConflictError(
      `Toolset ${current.name} is already registered by owner ${current.owner}; owner ${claim.owner} cannot register it too.`,
      { details },
    );
    return { error, taken: true };
  }
  if (current.kind !== claim.kind) {
    const error = new ConflictError(
      `Toolset ${current.name} is an ${current.kind} toolset; remove it before registering it as ${claim.kind}.`,
    );
    return { error, taken: false };
  }
  return undefined;
}

/** http and mcp toolsets are written whole, with their checks, by the registration API. */
export function registeredElsewhere(what: "tool" | "toolset", name: string): ValidationError {
  return new ValidationError(
    `The ${what} ${name} belongs to an http or mcp toolset: register it with PUT /v1/registered-toolsets/{name}.`,
  );
}
