/**
 * Bytes to text by the charset a response declares, in the order browsers and XML readers
 * use: a byte order mark, the `content-type` header, then the document itself (an XML
 * declaration, or HTML's `<meta charset>` within its first 1024 bytes); UTF-8 otherwise.
 * Node's TextDecoder carries full ICU, so Shift_JIS, EUC-KR, GB18030 or windows-1251 need no
 * extra library.
 */

const PRESCAN_BYTES = 1024;

type Decoder = InstanceType<typeof TextDecoder>;

/** A charset label: what the header or document names, before TextDecoder checks it. */
const LABEL = "([A-Za-z0-9._:-]{1,40})";
const HEADER_CHARSET = new RegExp(`charset\\s*=\\s*["']?${LABEL}`, "i");
const XML_DECLARATION = new RegExp(`^\\s*<\\?xml[^>]{0,200}?encoding\\s*=\\s*["']${LABEL}`);
/** `<meta charset="x">` and `<meta http-equiv="content-type" content="...; charset=x">`. */
const META_CHARSET = new RegExp(`<meta\\s[^>]{0,300}?charset\\s*=\\s*["']?\\s*${LABEL}`, "i");

export type DocumentKind = "html" | "xml";

export function decodeDocument(
  body: Uint8Array,
  contentType: string | null | undefined,
  kind: DocumentKind,
): string {
  const bom = byteOrderMark(body);
  if (bom) return new TextDecoder(bom).decode(body);
  const decoder =
    decoderFor(HEADER_CHARSET.exec(contentType ?? "")?.[1]) ??
    documentDecoder(documentCharset(body, kind));
  return (decoder ?? new TextDecoder("utf-8")).decode(body);
}

/** The label the document names for itself, if any (it may be one nobody knows). */
function documentCharset(body: Uint8Array, kind: DocumentKind): string | undefined {
  // Every label WHATWG knows is ASCII, so reading the head as latin1 finds it in any of them.
  const head = new TextDecoder("latin1").decode(body.subarray(0, PRESCAN_BYTES));
  return (kind === "xml" ? XML_DECLARATION : META_CHARSET).exec(head)?.[1];
}

function byteOrderMark(body: Uint8Array): string | undefined {
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) return "utf-8";
  if (body[0] === 0xfe && body[1] === 0xff) return "utf-16be";
  if (body[0] === 0xff && body[1] === 0xfe) return "utf-16le";
  return undefined;
}

function decoderFor(label: string | undefined): Decoder | undefined {
  if (label === undefined) return undefined;
  try {
    return new TextDecoder(label);
  } catch {
    // A label TextDecoder does not know: the next source decides.
    return undefined;
  }
}

/**
 * A document whose own label could be read as ASCII is not UTF-16 whatever it says (WHATWG
 * rules the same for `<meta charset=utf-16>`): such a label means UTF-8.
 */
function documentDecoder(label: string | undefined): Decoder | undefined {
  const decoder = decoderFor(label);
  return decoder?.encoding.startsWith("utf-16") ? new TextDecoder("utf-8") : decoder;
}
