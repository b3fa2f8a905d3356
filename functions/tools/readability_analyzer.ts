import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { readabilityAnalyzer } from "@toolbus/tools/readability";

/** Runs readability_analyzer calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(readabilityAnalyzer);
