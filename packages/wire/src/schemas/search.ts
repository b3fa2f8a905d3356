import * as z from "zod";
import { prose } from "../model/text";
import { category, jsonSchema } from "../model/tool";
import { selectionFields } from "./selection";

/** Longer than any need an agent puts in words; a bound on the work one search can ask for. */
export const MAX_QUERY_CHARS = 500;
export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 50;

/** What a request asks a tool to do, and what a tool's name says it does (explained as `action`). */
export const ACTIONS = ["create", "read", "list", "search", "update", "delete"] as const;

/** The parts of a tool a search reads, as the API names them in `matched`. */
export const SEARCH_FIELDS = [
  "id",
  "title",
  "description",
  "usageHint",
  "guidelines",
  "examples",
  "toolset",
  "input",
] as const;

/** What to search for: visible text (a 400 names a control or half character). */
export const searchQuery = prose(MAX_QUERY_CHARS).refine(
  (query) => query.trim().length > 0,
  "not only spaces",
);
export const searchLimit = z.number().int().min(1).max(MAX_SEARCH_LIMIT);

const limitDescription = `How many tools at most (1-${MAX_SEARCH_LIMIT}, default ${DEFAULT_SEARCH_LIMIT}).`;
const queryDescription = "What the agent needs, in words (1-500 characters).";
const explainDescription =
  "Say why each tool was found (`explanation`); for a caller with the admin permission, also the matching tools selection left out, with its reasons (`excluded`).";

/** `GET /v1/tools/search`: the query in `q`, and the mode and role to select as. */
export const toolSearchQuery = z.object({
  q: searchQuery.meta({ description: queryDescription, example: "refund a payment" }),
  limit: z.coerce.number().pipe(searchLimit).optional().meta({ description: limitDescription }),
  explain: z.enum(["true", "false"]).optional().meta({ description: explainDescription }),
  mode: selectionFields.mode,
  role: selectionFields.role,
});

/** `POST /v1/tools/search`: the query, and every field a selecting request may say. */
export const toolSearchBody = z
  .object({
    q: searchQuery.meta({ description: queryDescription }),
    limit: searchLimit.optional().meta({ description: limitDescription }),
    explain: z.boolean().optional().meta({ description: explainDescription }),
    ...selectionFields,
  })
  .strict()
  .meta({ id: "ToolSearchRequest" });

const matchedWord = z.object({
  word: z.string().meta({ description: "A word of the query, as written (lowercased)." }),
  fields: z.array(z.enum(SEARCH_FIELDS)).meta({
    description:
      "The fields it was found in: as itself or another form of it, else as a word of the same concept, a typo or a prefix.",
  }),
  as: z
    .array(z.string())
    .optional()
    .meta({
      description:
        "The tool's words it was found as, when not as itself: a related word (`directory` for `folder`), a typo's or a prefix's.",
      example: ["directory"],
    }),
});

/** Why a tool was found: the query's words and where each one was met. */
const explanation = z
  .object({
    words: z.array(matchedWord).meta({ description: "In the order of the query." }),
    notes: z.array(z.string()).meta({
      description:
        "What else to know before calling it, in words: `needs your github connection`, `answered by static_links (lacks network)`.",
    }),
    action: z
      .object({
        asked: z.enum(ACTIONS),
        does: z.enum(ACTIONS),
        weight: z.number().meta({
          description:
            "What the tool's word-match score was multiplied by (before any fusion with a semantic ranking).",
        }),
      })
      .optional()
      .meta({
        description:
          "What the query asks to do (read from its first words) and what the tool does (read from its name), when both say: the same action counts for more, another kind for less.",
        example: { asked: "delete", does: "delete", weight: 1.2 },
      }),
  })
  .meta({ id: "ToolSearchExplanation" });

const foundTool = z.object({
  id: z.string(),
  title: z.string(),
  toolset: z.string(),
  category,
  description: z.string(),
  usageHint: z.string(),
  inputSchema: jsonSchema,
  score: z.number().meta({ description: "BM25F over the weighted fields; higher is better." }),
  matched: z.array(z.enum(SEARCH_FIELDS)).meta({
    description: "The fields a word of the query was found in.",
  }),
  explanation: explanation.optional().meta({ description: "With `explain` only." }),
});

/** A tool that matches but that selection leaves out for the caller: for administrators. */
const excludedMatch = z.object({
  id: z.string(),
  title: z.string(),
  toolset: z.string(),
  score: z.number().meta({ description: "Ranked among every tool of the catalog read." }),
  matched: z.array(z.enum(SEARCH_FIELDS)),
  words: z.array(matchedWord),
  reasons: z.array(z.string()).meta({
    description: "Selection's reasons, as `/v1/select` names them in `excluded`.",
    example: ["capability:google_calendar"],
  }),
  why: z.string().meta({
    description: "The tool and its reasons in words.",
    example: "calendar: needs google_calendar",
  }),
});

export const toolSearchView = z
  .object({
    query: z.string(),
    mode: z.string(),
    role: z.string(),
    catalogVersion: z.string().meta({ description: "The catalog state that was searched." }),
    tools: z.array(foundTool).meta({ description: "Best first." }),
    excluded: z.array(excludedMatch).optional().meta({
      description:
        "With `explain`, for a caller with the admin permission only: matching tools selection leaves out for this role and mode, best first, at most `limit`.",
    }),
  })
  .meta({ id: "ToolSearch" });
