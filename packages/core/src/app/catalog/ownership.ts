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
  if (!current) return;
  const details = { toolset: current.name, registeredBy: current.owner, requestedBy: claim.owner };
  if (claim.kind === "builtin" && current.kind !== "builtin") {
    throw registeredElsewhere("toolset", current.name);
  }
  if (claim.kind !== "builtin" && current.kind === "builtin") {
    throw new ConflictError(
      `Toolset ${current.name} is built in (owner ${current.owner}); owner ${claim.owner} cannot register a toolset of that name.`,
      { details },
    );
  }
  if (current.owner !== claim.owner) {
    throw new ConflictError(
      `Toolset ${current.name} is already registered by owner ${current.owner}; owner ${claim.owner} cannot register it too.`,
      { details },
    );
  }
  if (current.kind !== claim.kind) {
    throw new ConflictError(
      `Toolset ${current.name} is an ${current.kind} toolset; remove it before registering it as ${claim.kind}.`,
    );
  }
}

/** http and mcp toolsets are written whole, with their checks, by the registration API. */
export function registeredElsewhere(what: "tool" | "toolset", name: string): ValidationError {
  return new ValidationError(
    `The ${what} ${name} belongs to an http or mcp toolset: register it with PUT /v1/registered-toolsets/{name}.`,
  );
}
