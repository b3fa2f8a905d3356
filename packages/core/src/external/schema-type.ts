import { z } from "zod";
import { schemaIssues } from "./json-schema";

/**
 * A zod type that checks values against a registered JSON Schema, so registered tools run
 * through the same execute path (input re-check, output check) as tools written in zod.
 */
export function jsonSchemaType(schema: Record<string, unknown>): z.ZodType<unknown> {
  return z.unknown().superRefine((value, context) => {
    for (const issue of schemaIssues(schema, value)) {
      context.addIssue({ code: "custom", message: `${issue.path}: ${issue.message}` });
    }
  });
}
