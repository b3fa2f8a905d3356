export { htmlToText } from "../text/html";
export { parseFeedDate } from "./dates";
export { FEED_FORMATS, type FeedFormat } from "./formats";
export {
  type FeedItem,
  newestFirst,
  type ParsedFeed,
  parseFeed,
  SUMMARY_MAX_CHARS,
} from "./parse";
export {
  decodeFeed,
  FEED_MAX_BYTES,
  feedItem,
  type RssFeedInput,
  type RssFeedOutput,
  type RssFeedSettings,
  rssFeed,
  rssFeedInput,
  rssFeedOutput,
  rssFeedSettings,
  rssFeedToolset,
} from "./rss-feed";
