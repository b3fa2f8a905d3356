import type {
  HttpToolRegistrationInput,
  HttpToolsetRegistrationInput,
  McpToolDefaultsInput,
  McpToolsetRegistrationInput,
  SecretHeaderInput,
  ToolAvailabilityInput,
  ToolsetRegistrationInput,
} from "./generated/catalog-types.js";

// The bodies of `PUT /v1/registered-toolsets/{name}`, as a caller writes them (defaults may be
// left out), generated from the API's own schemas so they cannot drift. The API checks every
// field and names each wrong one in a 400; a registration file read by the CLI goes to the
// API unchanged.

/** A request header whose value the stage reads from a named secret: never the value itself. */
export type SecretHeaderRef = SecretHeaderInput;
/** One tool of an http toolset: the catalog fields of any tool, plus how to call it. */
export type HttpToolRegistration = HttpToolRegistrationInput;
export type HttpToolsetRegistration = HttpToolsetRegistrationInput;
export type McpToolDefaults = McpToolDefaultsInput;
export type McpToolsetRegistration = McpToolsetRegistrationInput;
export type ToolsetRegistration = ToolsetRegistrationInput;

export interface RefreshToolsetRequest {
  /** Remote tool name -> id here, merged into the stored renames. */
  renames?: Record<string, string>;
}

/**
 * Who may use a tool on this stage (`client.tools.setAvailability`): `enabled` (default true),
 * `modes` (absent: every mode), `minRole` (absent: every role). The whole availability is
 * replaced.
 */
export type ToolAvailability = ToolAvailabilityInput;

/** A write that applies only to the revision you read. */
export interface RevisionOptions {
  /** The revision you read (its ETag or `revision`): 409 if it moved on. */
  ifMatch?: string | number;
}

export type RemoveToolsetOptions = RevisionOptions;

/**
 * Which held changes of a registered MCP server to accept or reject: `tools` (the ids the
 * review shows), else every pending one; `ifMatch` is the toolset revision the review showed,
 * so that a change found by a refresh since is not decided unseen.
 */
export interface ReviewDecisionOptions extends RevisionOptions {
  tools?: readonly string[];
}
