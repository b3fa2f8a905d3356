import type { SEARCH_FIELDS } from "@toolbus/wire/schemas/search";

export type SearchField = (typeof SEARCH_FIELDS)[number];

/**
 * How much a match in each field counts. What a tool is (its name and title) and what it does
 * and is for (its description and hint) count alike; guidelines, examples and the toolset
 * mostly say what is around it; what it takes (its input's property names and descriptions)
 * least: a parameter's name finds a tool its text never names ("latitude"), but says little
 * of what the tool is for. Chosen on the fixture's tune queries only (bench/search.ts), the
 * input's on the real catalog's tune queries (bench/search-real.ts): the ranking barely moves
 * within ±50% of these.
 */
export const FIELD_WEIGHTS: Record<SearchField, number> = {
  id: 2,
  title: 2,
  description: 2,
  usageHint: 2,
  guidelines: 0.5,
  examples: 0.7,
  toolset: 0.7,
  input: 0.3,
};
