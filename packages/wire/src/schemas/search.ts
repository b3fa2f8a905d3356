import * as z from "zod";
import { prose } from "../model/text";
import { category, jsonSchema } from "../model/tool";
import { selectionFields } from "./selection";

/** Longer than any need an agent puts in words; a bound on the work one search can ask for. */
export const MAX_QUERY_CHARS = 500;
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 50;

/** The parts of a tool a search reads, as the API names them in `matched`. */
export const SEARCH_FIELDS = [
  "id",
  "title",
  "description",
  "usageHint",
  "guidelines",
  "examples",
  "toolset",
] as const;

/** What to search for: visible text (a 400 names a control or half character). */
export const searchQuery = prose(MAX_QUERY_CHARS).refine(
  (query) => query.trim().length > 0,
  "not only spaces",
);
export const searchLimit = z.number().int().min(1).max(MAX_SEARCH_LIMIT);

const limitDescription = `How many tools at most (1-${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}).`;
const queryDescription = "What the agent needs, in words (1-500 characters).";

/** `GET /v1/tools/search`: the query in `q`, and the mode and role to select as. */
export const toolSearchQuery = z.object({
  q: searchQuery.meta({ description: queryDescription, example: "refund a payment" }),
  limit: z.coerce.number().pipe(searchLimit).optional().meta({ description: limitDescription }),
  mode: selectionFields.mode,
  role: selectionFields.role,
});

/** `POST /v1/tools/search`: the query, and every field a selecting request may say. */
export const toolSearchBody = z
  .object({
    q: searchQuery.meta({ description: queryDescription }),
    limit: searchLimit.optional().meta({ description: limitDescription }),
    ...selectionFields,
  })
  .strict()
  .meta({ id: "ToolSearchRequest" });

const foundTool = z.object({
  id: z.string(),
  title: z.string(),
  toolset: z.string(),
  category,
  description: z.string(),
  usageHint: z.string(),
  inputSchema: jsonSchema,
  score: z.number().meta({ description: "BM25 over the weighted fields; higher is better." }),
  matched: z.array(z.enum(SEARCH_FIELDS)).meta({
    description: "The fields a word of the query was found in.",
  }),
});

export const toolSearchView = z
  .object({
    query: z.string(),
    mode: z.string(),
    role: z.string(),
    catalogVersion: z.string().meta({ description: "The catalog state that was searched." }),
    tools: z.array(foundTool).meta({ description: "Best first." }),
  })
  .meta({ id: "ToolSearch" });
