import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { calendar } from "@toolbus/tools/calendar";

/** Runs calendar calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(calendar);
