import type { z } from "zod";
import { nearest } from "./util/nearest";
import { knownKeysAt } from "./util/schema-keys";

// The error classes are the wire's vocabulary (each names the code and status a caller sees), so
// they live with the wire contract; core raises them and adds what only the server knows.
export {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  PublishError,
  RateLimitedError,
  ToolbusError,
  UnauthorizedError,
  UnavailableError,
  ValidationError,
} from "@toolbus/wire/errors";

import { PublishError, type ToolbusError } from "@toolbus/wire/errors";

/**
 * What a caller is told of an error of ours, over REST and MCP alike. A PublishError names
 * bus error codes, internal words, so it gets a fixed message saying how to recover.
 */
export function callerMessage(error: ToolbusError): string {
  return error instanceof PublishError
    ? "The call was recorded but could not be announced; retry the same request with the same call id."
    : error.message;
}

/** One problem with a value, named by its path: what every 400 lists in `details`. */
export interface Issue {
  path: string;
  message: string;
}

/**
 * zod issues as Issues, one per failing path: an unknown key is named by its own path, not its
 * parent's, and given the nearest known key when `schema` (the one that raised the issues)
 * has one close enough. `root` names the value itself when the path is empty.
 */
export function zodIssues(
  issues: readonly z.core.$ZodIssue[],
  root = "(input)",
  schema?: z.ZodType,
): Issue[] {
  return issues.flatMap((issue) => {
    const at = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      const known = schema ? knownKeysAt(schema, issue.path) : [];
      return issue.keys.map((key) => {
        const meant = nearest(key, known);
        return {
          path: [...at, key].join("."),
          message: meant ? `unknown field; did you mean "${meant}"?` : "unknown field",
        };
      });
    }
    return [{ path: at.join(".") || root, message: issue.message }];
  });
}
