import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { webSearch } from "@toolbus/tools/web-search";

/** Runs web_search calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(webSearch);
