/**
 * The feed formats read. Apart from the parser (./parse), so the tool's output schema names
 * them without loading the XML and HTML parsers: those load on the tool's first run.
 */
export const FEED_FORMATS = ["rss2", "atom", "rss1"] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];
