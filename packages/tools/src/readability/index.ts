export {
  analyzeReadability,
  INTERPRETATIONS,
  type Interpretation,
  interpret,
  type ReadabilityMetrics,
  WORDS_PER_MINUTE,
} from "./analyze";
export {
  type ReadabilityInput,
  readabilityAnalyzer,
  readabilityInput,
  readabilityOutput,
} from "./readability-analyzer";
export { countSyllables } from "./syllables";
export { splitSentences, tokenizeWords } from "./text";
