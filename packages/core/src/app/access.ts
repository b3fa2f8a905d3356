import type { Principal } from "@toolbus/wire/model/call";
import { PERMISSIONS, type Permission } from "@toolbus/wire/model/permission";
import { ValidationError } from "../errors";

/**
 * Who may do what, decided here and nowhere else. The REST routes, the MCP server, key
 * creation, selection, catalog checks, subscriptions and the stage configuration's own
 * validation all ask this module, so a role can never pass one door and be stopped at the
 * next for the same thing.
 *
 * Every function takes the rules as data rather than the whole stage configuration: the
 * configuration validates itself with `isKnownRole`, so this module must not depend on it.
 */

export type { Permission };

/** The part of the stage configuration access is decided from; a `StageConfig` is one. */
export interface AccessRules {
  /** From least to most privileged. */
  readonly roles: readonly string[];
  readonly permissions: {
    readonly read: string;
    readonly call: string;
    readonly admin: string;
    readonly subscribe?: string | undefined;
    readonly approve?: string | undefined;
  };
}

/** Whether the stage has this role at all. */
export function isKnownRole(rules: Pick<AccessRules, "roles">, role: string): boolean {
  return rules.roles.includes(role);
}

/** A 400 naming the stage's roles unless `role` is one of them; `path` is where it was given. */
export function requireKnownRole(
  rules: Pick<AccessRules, "roles">,
  role: string,
  path = "role",
): void {
  if (isKnownRole(rules, role)) return;
  throw new ValidationError(`Unknown role ${role}.`, {
    details: [{ path, message: `One of: ${rules.roles.join(", ")}.` }],
  });
}

/**
 * True when `role` is at least `minimum` in the stage's order. A role the stage does not know,
 * on either side, is never enough: a mistake in configuration closes access, never opens it.
 */
export function roleAtLeast(
  rules: Pick<AccessRules, "roles">,
  role: string,
  minimum: string,
): boolean {
  const have = rules.roles.indexOf(role);
  const need = rules.roles.indexOf(minimum);
  return have >= 0 && need >= 0 && have >= need;
}

/** The top of the order: what the bootstrap admin key acts with. */
export function highestRole(rules: AccessRules): string {
  return rules.roles[rules.roles.length - 1] ?? rules.permissions.admin;
}

/**
 * The lowest role a permission needs. `subscribe` is open to whoever may call unless the stage
 * says otherwise; `approve` is the administrators' unless it names another role.
 */
export function requiredRole(
  rules: Pick<AccessRules, "permissions">,
  permission: Permission,
): string {
  if (permission === "approve") return rules.permissions.approve ?? rules.permissions.admin;
  return rules.permissions[permission] ?? rules.permissions.call;
}

/** Whether the principal's role grants the permission. */
export function hasPermission(
  rules: AccessRules,
  principal: Pick<Principal, "role">,
  permission: Permission,
): boolean {
  return roleAtLeast(rules, principal.role, requiredRole(rules, permission));
}

/** Every permission the principal's role grants, in PERMISSIONS' order. */
export function permissionsOf(
  rules: AccessRules,
  principal: Pick<Principal, "role">,
): Permission[] {
  return PERMISSIONS.filter((permission) => hasPermission(rules, principal, permission));
}

/**
 * Whether a principal may act as `role`, e.g. to see what that role is offered: its own role
 * always, a lower one too, never one above it.
 */
export function mayActAs(
  rules: Pick<AccessRules, "roles">,
  principal: Pick<Principal, "role">,
  role: string,
): boolean {
  return role === principal.role || roleAtLeast(rules, principal.role, role);
}

/** Whether a principal may manage what any other principal owns: administrators may. */
export function mayActForOthers(rules: AccessRules, principal: Pick<Principal, "role">): boolean {
  return hasPermission(rules, principal, "admin");
}

/** Whether a principal may manage what `owner` owns: its own, or anyone's if it may act for others. */
export function mayActFor(
  rules: AccessRules,
  principal: Pick<Principal, "id" | "role">,
  owner: Pick<Principal, "id">,
): boolean {
  return owner.id === principal.id || mayActForOthers(rules, principal);
}
