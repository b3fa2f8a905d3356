import { toolEntry } from "@toolbus/core/compose/tool-entry";
import { rssFeed } from "@toolbus/tools/rss-feed";

/** Runs rss_feed calls delivered by the bus, with what its definition says it needs. */
export const handler = toolEntry(rssFeed);
