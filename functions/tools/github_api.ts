import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { githubApi } from "@toolbus/tools/github";

/** Runs github_api calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(githubApi);
