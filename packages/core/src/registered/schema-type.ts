import * as z from "zod";
import { schemaIssues } from "./json-schema";

/**
 * A zod type that checks values against a registered JSON Schema, so registered tools run
 * through the same execute path (input re-check, output check) as tools written in zod.
 */
export function jsonSchemaType(schema: Record<string, unknown> | undefined): z.ZodType<unknown> {
  // No schema declared: the tool answers in content, and whatever data it gives is kept as is.
  if (!schema) return z.unknown();
  return z.unknown().superRefine((value, context) => {
    for (const issue of schemaIssues(schema, value)) {
      context.addIssue({ code: "custom", message: `${issue.path}: ${issue.message}` });
    }
  });
}

/** What a model reads of a registered tool's answer; the whole of it stays in `data`. */
const MAX_OUTPUT_CHARS = 8_000;

export function textForModel(text: string): string {
  return text.length > MAX_OUTPUT_CHARS
    ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n… (cut; the full answer is in data)`
    : text;
}
