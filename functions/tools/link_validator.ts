import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { linkValidator } from "@toolbus/tools/link-validator";

/** Runs link_validator calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(linkValidator);
