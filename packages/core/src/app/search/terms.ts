import { stemmer } from "stemmer";
import { isStopWord } from "./words";

/** Words longer than this are kept whole: no English word needs stemming past it. */
const MAX_STEMMED_LENGTH = 24;

/**
 * The form a word is indexed and searched under: English stop words are dropped, the rest
 * stemmed (Porter), so "refunds", "refunded" and "refunding" meet at "refund".
 */
export function term(word: string): string | null {
  if (isStopWord(word)) return null;
  if (word.length > MAX_STEMMED_LENGTH || !/^[a-z]+$/.test(word)) return word;
  return stemmer(word);
}
