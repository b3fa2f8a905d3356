import * as z from "zod";

/**
 * Characters no name or text of ours may carry: control characters (C0, DEL, C1), the
 * bidirectional overrides and isolates that make text read differently from what it is, and
 * lone surrogates (half a character: invalid UTF-8 anywhere it is written, DynamoDB included).
 */
const INVISIBLE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;
/** Prose keeps its tabs and line breaks. */
const INVISIBLE_IN_PROSE = /(?![\t\n\r])\p{Cc}|[\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;
/** Names show up in consoles, lists and generated files: no markup. */
const MARKUP = /[<>]/;

/** A name a person gives (a key, an owner) or a title: one line of visible characters. */
export const label = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((value) => !INVISIBLE.test(value), "no control, bidirectional or half characters")
    .refine((value) => !MARKUP.test(value), "no < or >");

/** Descriptions and hints: any visible text and line breaks. */
export const prose = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine(
      (value) => !INVISIBLE_IN_PROSE.test(value),
      "no control, bidirectional or half characters",
    );
