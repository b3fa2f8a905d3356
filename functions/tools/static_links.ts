import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { staticLinks } from "@toolbus/tools/static-links";

/** Runs static_links calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(staticLinks);
