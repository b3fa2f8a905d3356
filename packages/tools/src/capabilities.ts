import { type CapabilityDetector, networkCapability } from "@toolbus/core/capabilities";
import { googleCalendarCapability } from "./calendar/capability";
import { githubTokenCapability } from "./github/capability";
import { staticLinksCapability } from "./static-links/capability";
import { searchApiKeyCapability } from "./web-search/capability";

/*
 * Each detector lives beside its tool, so a tool's function imports only the detectors its
 * tool requires; the API and the seed, which detect every capability, take them all here.
 */
export {
  githubTokenCapability,
  googleCalendarCapability,
  searchApiKeyCapability,
  staticLinksCapability,
};

/** The capabilities the built-in tools require, with how each is detected and verified. */
export const builtinCapabilities: readonly CapabilityDetector[] = Object.freeze([
  githubTokenCapability,
  searchApiKeyCapability,
  googleCalendarCapability,
  networkCapability,
  staticLinksCapability,
]);
