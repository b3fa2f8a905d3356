export {
  type CompiledPattern,
  compilePattern,
  MAX_PATTERN_DEPTH,
  MAX_PATTERN_ELEMENTS,
  matchesPattern,
  validatePattern,
} from "./compile";
export { InvalidEventPatternError } from "./errors";
export { createPatternIndex, type PatternIndex } from "./pattern-index";
export type { MatchWork } from "./work";
