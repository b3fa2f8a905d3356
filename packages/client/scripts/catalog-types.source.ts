// The types the client takes from @toolbus/core and @toolbus/tools. scripts/generate-types.ts
// prints each one written out in full into src/generated/catalog-types.ts, so the published
// client carries them without depending on the (unpublished) workspace packages.
import type { PromptTool, RenderedPrompt } from "@toolbus/core";
import type { Harness, renderRequest } from "@toolbus/core/harness";
import type {
  CapabilityStatus,
  Category,
  Citation,
  Failure,
  HttpToolRegistrationInput,
  HttpToolsetRegistrationInput,
  McpToolDefaultsInput,
  McpToolsetRegistrationInput,
  Principal,
  SecretHeaderInput,
  ToolCallScheduled,
  ToolResultReceived,
  ToolSpec,
  ToolsetRegistrationInput,
  ToolsetSpec,
} from "@toolbus/core/model";
import type { calendarInput, calendarOutput } from "@toolbus/tools/calendar";
import type { githubInput, githubOutput } from "@toolbus/tools/github";
import type { linkValidatorInput, linkValidatorOutput } from "@toolbus/tools/link-validator";
import type { readabilityInput, readabilityOutput } from "@toolbus/tools/readability";
import type { rssFeedInput, rssFeedOutput } from "@toolbus/tools/rss-feed";
import type { staticLinksInput, staticLinksOutput } from "@toolbus/tools/static-links";
import type { webSearchInput, webSearchOutput } from "@toolbus/tools/web-search";
import type { z } from "zod";

export type {
  CapabilityStatus,
  Category,
  Citation,
  Failure,
  Harness,
  HttpToolRegistrationInput,
  HttpToolsetRegistrationInput,
  McpToolDefaultsInput,
  McpToolsetRegistrationInput,
  Principal,
  PromptTool,
  RenderedPrompt,
  SecretHeaderInput,
  ToolCallScheduled,
  ToolResultReceived,
  ToolSpec,
  ToolsetRegistrationInput,
  ToolsetSpec,
};
/** The body of `POST /v1/agents/render` as a caller writes it. */
export type RenderAgentRequest = z.input<typeof renderRequest>;

// Built-in tools: what a caller sends (zod's input type: defaults may be left out) and the
// `data` of a succeeded call.
export type CalendarInput = z.input<typeof calendarInput>;
export type CalendarOutput = z.output<typeof calendarOutput>;
export type GithubInput = z.input<typeof githubInput>;
export type GithubOutput = z.output<typeof githubOutput>;
export type LinkValidatorInput = z.input<typeof linkValidatorInput>;
export type LinkValidatorOutput = z.output<typeof linkValidatorOutput>;
export type ReadabilityInput = z.input<typeof readabilityInput>;
export type ReadabilityOutput = z.output<typeof readabilityOutput>;
export type RssFeedInput = z.input<typeof rssFeedInput>;
export type RssFeedOutput = z.output<typeof rssFeedOutput>;
export type StaticLinksInput = z.input<typeof staticLinksInput>;
export type StaticLinksOutput = z.output<typeof staticLinksOutput>;
export type WebSearchInput = z.input<typeof webSearchInput>;
export type WebSearchOutput = z.output<typeof webSearchOutput>;
