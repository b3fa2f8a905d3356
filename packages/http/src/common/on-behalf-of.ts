import { requireKnownRole, roleAtLeast } from "@toolbus/core/app/access";
import type { StageConfig } from "@toolbus/core/config";
import { ForbiddenError, ValidationError } from "@toolbus/core/errors";
import type { ApiKeyRecord } from "@toolbus/core/ports";
import type { Principal } from "@toolbus/wire/model/call";

/** The end user a trusted backend's key acts for, by the backend's own id for them. */
export const ON_BEHALF_OF_HEADER = "x-toolbus-on-behalf-of";
/** A role for that end user below the key's own (the key's role when absent). */
export const ON_BEHALF_OF_ROLE_HEADER = "x-toolbus-on-behalf-of-role";

/**
 * An end user's id as a backend names them: letters and digits first, then those and `. _ @ +
 * : -`. No `#` or `/`: principal ids become parts of stored keys and paths.
 */
const USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@+:-]{0,127}$/;

/**
 * The principal a request names in `X-Toolbus-On-Behalf-Of`, when its key was created with
 * `actsFor`. The id is prefixed with the key's id, so two backends' users with the same id are
 * two principals, and it can never be a key's id (which has no colon) nor a signed-in
 * person's (`oauth:` and a hash). The role is the key's, or a lower one the request names.
 * Any other credential naming an end user is refused: acting for people is granted, not taken.
 */
export function endUserPrincipal(
  config: StageConfig,
  key: Pick<ApiKeyRecord, "keyId" | "role" | "actsFor"> | undefined,
  userId: string,
  role: string | undefined,
): Principal {
  if (!key?.actsFor) {
    throw new ForbiddenError(
      "This credential may not act for end users: only a key created with actsFor may send X-Toolbus-On-Behalf-Of.",
    );
  }
  if (!USER_ID.test(userId)) {
    throw new ValidationError("X-Toolbus-On-Behalf-Of is not a valid user id.", {
      details: [
        {
          path: "X-Toolbus-On-Behalf-Of",
          message: "1-128 characters: letters and digits first, then letters, digits, . _ @ + : -",
        },
      ],
    });
  }
  let granted = key.role;
  if (role !== undefined) {
    requireKnownRole(config, role, "X-Toolbus-On-Behalf-Of-Role");
    if (!roleAtLeast(config, key.role, role)) {
      throw new ForbiddenError(`An end user may not get a role above the key's (${key.role}).`);
    }
    granted = role;
  }
  return {
    id: `${key.keyId}:user:${userId}`,
    role: granted,
    subject: userId,
    actingKeyId: key.keyId,
  };
}
