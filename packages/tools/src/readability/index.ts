export { analyzeReadability, interpret } from "./analyze";
export {
  INTERPRETATIONS,
  type Interpretation,
  type ReadabilityMetrics,
  WORDS_PER_MINUTE,
} from "./metrics";
export {
  type ReadabilityInput,
  readabilityAnalyzer,
  readabilityInput,
  readabilityOutput,
} from "./readability-analyzer";
export { countSyllables } from "./syllables";
export { splitSentences, tokenizeWords } from "./text";
