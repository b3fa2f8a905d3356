import { type CallResult, MAX_RESULT_BYTES } from "@toolbus/wire/model/call";

/**
 * Largest result stored with a call, as UTF-8 bytes of its JSON. DynamoDB rejects items over
 * 400 KB; the rest of the call item (input, principal, keys) gets the remaining ~100 KB.
 * The tool runtime caps results earlier, but `complete` must not fail when it did not.
 */
export const MAX_STORED_RESULT_BYTES = MAX_RESULT_BYTES;

/** Failure messages are for people and logs: a few KB is plenty when space runs out. */
const MAX_FAILURE_MESSAGE_CHARS = 2_000;
/** Below this much room for the output, citations are dropped to make space for text. */
const MIN_OUTPUT_BYTES = 4_096;

export const jsonBytes = (value: unknown): number =>
  Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

/**
 * Shrinks a result until its JSON fits `maxBytes`, in order of least value to a model:
 * `data` becomes null, then `output` is cut (with a note saying so), and only if even that
 * leaves too little room, citations go and the failure message is shortened.
 * Anything changed sets `truncated: true`; `resultBytes` keeps the original size.
 */
export function fitResult(result: CallResult, maxBytes = MAX_STORED_RESULT_BYTES): CallResult {
  if (jsonBytes(result) <= maxBytes) return result;

  let fitted: CallResult = { ...result, data: null, truncated: true };
  if (jsonBytes(fitted) <= maxBytes) return fitted;

  let room = maxBytes - jsonBytes({ ...fitted, output: "" });
  if (room < MIN_OUTPUT_BYTES) {
    fitted = {
      ...fitted,
      citations: [],
      failure: fitted.failure && {
        ...fitted.failure,
        message: fitted.failure.message.slice(0, MAX_FAILURE_MESSAGE_CHARS),
      },
    };
    room = maxBytes - jsonBytes({ ...fitted, output: "" });
  }
  return { ...fitted, output: truncateOutput(result.output, room) };
}

/**
 * The longest prefix of `text`, plus a note, whose JSON string (quotes and escapes included)
 * takes at most `maxBytes`. Never splits a surrogate pair.
 */
export function truncateOutput(text: string, maxBytes: number): string {
  const totalBytes = Buffer.byteLength(text, "utf8");
  const withNote = (length: number) => {
    const head = text.slice(0, length);
    return `${head}\n[output truncated: ${Buffer.byteLength(head, "utf8")} of ${totalBytes} bytes kept]`;
  };
  if (jsonBytes(withNote(0)) > maxBytes) return "";

  // Binary search on the prefix length: escapes make bytes per character uneven.
  let low = 0;
  let high = text.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (jsonBytes(withNote(middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  const code = text.charCodeAt(low - 1);
  const splitsPair = low > 0 && code >= 0xd800 && code <= 0xdbff;
  return withNote(splitsPair ? low - 1 : low);
}
