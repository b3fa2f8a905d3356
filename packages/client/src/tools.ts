// The built-in tools' wire types, generated from their own zod schemas (src/generated): the
// client loads no tool code, and a schema change in @toolbus/tools changes these types when
// the generated file is written again (a test fails until it is).
import type {
  CalendarInput,
  CalendarOutput,
  GithubInput,
  GithubOutput,
  LinkValidatorInput,
  LinkValidatorOutput,
  ReadabilityInput,
  ReadabilityOutput,
  RssFeedInput,
  RssFeedOutput,
  StaticLinksInput,
  StaticLinksOutput,
  WebSearchInput,
  WebSearchOutput,
} from "./generated/catalog-types.js";

/**
 * Input and output types of every built-in tool, by id. `input` is what a caller sends (zod's
 * input type: defaults may be left out), `output` the `data` of a succeeded call. `fallback`
 * names the tool whose data comes back when this one was unavailable (the spec's `fallback`).
 */
export interface BuiltinTools {
  calendar: { input: CalendarInput; output: CalendarOutput };
  github_api: { input: GithubInput; output: GithubOutput };
  link_validator: {
    input: LinkValidatorInput;
    output: LinkValidatorOutput;
  };
  readability_analyzer: {
    input: ReadabilityInput;
    output: ReadabilityOutput;
  };
  rss_feed: { input: RssFeedInput; output: RssFeedOutput };
  static_links: {
    input: StaticLinksInput;
    output: StaticLinksOutput;
  };
  web_search: {
    input: WebSearchInput;
    output: WebSearchOutput;
    fallback: "static_links";
  };
}

export type BuiltinToolId = keyof BuiltinTools;

/** A built-in id (autocompleted) or any other registered tool's id. */
export type ToolId = BuiltinToolId | (string & {});

/** What `call` accepts as input for a tool: typed for built-ins, `unknown` for the rest. */
export type ToolInput<T extends string> = T extends BuiltinToolId
  ? BuiltinTools[T]["input"]
  : unknown;

/** The `data` of a succeeded call of a tool: typed for built-ins, `unknown` for the rest. */
export type ToolOutput<T extends string> = T extends BuiltinToolId
  ? BuiltinTools[T]["output"]
  : unknown;

/** The tool that stands in when `T` is unavailable, or `never`. */
export type ToolFallback<T extends string> = T extends BuiltinToolId
  ? BuiltinTools[T] extends { fallback: infer F extends BuiltinToolId }
    ? F
    : never
  : never;
