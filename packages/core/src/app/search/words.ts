/**
 * A text's words and the stop words among them: what search reads of any text before
 * stemming (terms.ts). Apart from the stemmer, so that the stage configuration can check the
 * words it is given (`search.synonyms`) without loading it.
 */

/** Words too common in tool descriptions and agents' requests to tell tools apart. */
const STOP_WORDS = new Set(
  (
    "a an and any are as at be by can could do does for from get how i in into is it its me my " +
    "need of on or our please should so some than that the their them then there these this to " +
    "tool use using want was we what when where which while who will with would you your " +
    // What contractions leave once their clitic is dropped (I'm, they're, let's, shan't, ...).
    "am been being did had has have he let shall she they us were " +
    // What introduces a name rather than says what is wanted ("a branch called fix").
    "called named"
  ).split(" "),
);

/**
 * What follows an apostrophe in an English contraction or possessive (`what's`, `team's`,
 * `you've`, `we'll`, `they're`, `I'd`, `I'm`, `don't`): dropped with the apostrophe, so none
 * is left as a one- or two-letter word of its own.
 */
const CLITICS = new Set(["s", "t", "ve", "ll", "re", "d", "m"]);

/** `n't` contractions whose stem is not the word less its `n`: can't, won't, shan't. */
const NEGATED: Record<string, string> = { ca: "can", wo: "will", sha: "shall" };

/**
 * Runs of letters and digits joined by apostrophes or underscores: `today's`, `don't`,
 * `create_issue`, `slackListChannels`. Each separator must have a letter or digit on both
 * sides, so the match is linear in the text whatever it holds.
 */
const RUN = /[\p{L}\p{M}\p{N}]+(?:[_'’ʼ][\p{L}\p{M}\p{N}]+)*/gu;
const APOSTROPHE = /['’ʼ]/u;
/**
 * Where a camelCase name turns to its next word: `slackList`, `HTTPResponse`, `s3Bucket`
 * (but not the plural of `URLs` or `IDs`).
 */
const HUMP = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll}{2})/u;

/**
 * A text's words: letters and digits of any script, lowercased after NFKC (so full-width and
 * ligature forms read as their plain letters). Read as an agent writes and a tool is named:
 *
 * - contractions and possessives lose their clitic (`today's` -> today, `don't` -> do,
 *   `won't` -> will); other apostrophes separate words (`o'clock` -> o, clock);
 * - `snake_case` and `camelCase` names give their words and, after them, the whole name
 *   (`create_issue` -> create, issue, create_issue; `slackListChannels` -> slack, list,
 *   channels, slacklistchannels), so a name matches by its words and as itself;
 * - hyphens and other punctuation separate words.
 *
 * Linear in the text, whatever it holds.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const [run] of text.normalize("NFKC").matchAll(RUN)) {
    if (!/[_'’ʼ]/u.test(run) && !HUMP.test(run)) {
      out.push(run.toLowerCase());
      continue;
    }
    const segments = run.split(APOSTROPHE);
    for (const [i, segment] of segments.entries()) {
      const next = segments[i + 1]?.toLowerCase();
      if (i > 0 && CLITICS.has(segment.toLowerCase())) continue;
      let word = segment;
      if (next === "t" && /n$/i.test(word)) {
        word = word.slice(0, -1);
        word = NEGATED[word.toLowerCase()] ?? word;
      }
      for (const part of nameParts(word)) out.push(part);
    }
  }
  return out;
}

/**
 * The words of one apostrophe-free run: itself when it is one word, else its snake_case and
 * camelCase parts (one-letter camel humps such as the i of iPhone aside) and then the whole.
 */
function nameParts(run: string): string[] {
  const snakes = run.split("_").filter((part) => part.length > 0);
  const parts: string[] = [];
  for (const snake of snakes) {
    const humps = snake.split(HUMP);
    if (humps.length === 1) parts.push(snake.toLowerCase());
    else for (const hump of humps) if (hump.length > 1) parts.push(hump.toLowerCase());
  }
  const whole = snakes.join("_").toLowerCase();
  if (parts.length !== 1 || parts[0] !== whole) parts.push(whole);
  return parts;
}

/** Whether a word is one of the stop words (before stemming). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/**
 * Why a member written for a group of words that stand for one another (concepts.ts, a stage's
 * `search.synonyms`) would never apply as written, or undefined when it would: it must hold a
 * word that is searched, and a phrase must keep more than one ("log in" would apply on every
 * "log").
 */
export function conceptMemberProblem(member: string): string | undefined {
  const all = words(member);
  // Distinct: "hour by hour" is one word as a query holds it, and would apply on every "hour".
  const searched = new Set(all.filter((word) => !isStopWord(word))).size;
  if (searched === 0) return "holds no searchable word (only stop words or punctuation)";
  if (searched === 1 && all.length > 1) {
    return "is a phrase of one word besides stop words and repeats: it would apply on that word alone";
  }
  return undefined;
}
