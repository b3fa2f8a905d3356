import { stemmer } from "stemmer";

/** Words longer than this are kept whole: no English word needs stemming past it. */
const MAX_STEMMED_LENGTH = 24;

/** Words too common in tool descriptions and agents' requests to tell tools apart. */
const STOP_WORDS = new Set(
  (
    "a an and any are as at be by can could do does for from get how i in into is it its me my " +
    "need of on or our please should so some than that the their them then there these this to " +
    "tool use using want was we what when where which while who will with would you your"
  ).split(" "),
);

/**
 * A text's words: letters and digits of any script, lowercased after NFKC (so full-width and
 * ligature forms read as their plain letters). `snake_case` ids split on `_`. Linear in the
 * text, whatever it holds.
 */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}]+/gu) ?? []
  );
}

/**
 * The form a word is indexed and searched under: English stop words are dropped, the rest
 * stemmed (Porter), so "refunds", "refunded" and "refunding" meet at "refund".
 */
export function term(word: string): string | null {
  if (STOP_WORDS.has(word)) return null;
  if (word.length > MAX_STEMMED_LENGTH || !/^[a-z]+$/.test(word)) return word;
  return stemmer(word);
}
