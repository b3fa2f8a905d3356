/**
 * IPv4 and IPv6 CIDR matching for the `cidr` operator. Event values are parsed on every
 * evaluation, so the parsers scan character codes into a reused buffer instead of splitting
 * strings: matching a CIDR allocates nothing.
 */

export type StringTest = (value: string) => boolean;

const V4 = 4;
const V6 = 6;
const NOT_AN_IP = 0;

// One scratch buffer for the module: evaluation is synchronous, so no two parses overlap.
const scratchWords = new Uint32Array(4);
const scratchGroups = new Uint16Array(8);

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/** Dotted-quad between `start` and `end`, as an unsigned 32-bit number, or -1. */
function parseIPv4(text: string, start: number, end: number): number {
  let result = 0;
  let octets = 0;
  let i = start;
  while (octets < 4) {
    let value = 0;
    let digits = 0;
    while (i < end && isDigit(text.charCodeAt(i))) {
      value = value * 10 + (text.charCodeAt(i) - 48);
      digits++;
      i++;
      if (digits > 3) return -1;
    }
    if (digits === 0 || value > 255) return -1;
    result = result * 256 + value;
    octets++;
    if (octets < 4) {
      if (i >= end || text.charCodeAt(i) !== 46) return -1;
      i++;
    }
  }
  return i === end ? result : -1;
}

/** IPv6 text (compressed forms and a dotted-quad tail allowed) into `scratchGroups`. */
function parseIPv6(text: string, start: number, end: number): boolean {
  const groups = scratchGroups;
  let count = 0;
  let gap = -1;
  let i = start;
  if (end - start < 2) return false;
  if (text.charCodeAt(i) === 58) {
    if (text.charCodeAt(i + 1) !== 58) return false;
    gap = 0;
    i += 2;
  }
  while (i < end) {
    if (count >= 8) return false;
    let value = 0;
    let j = i;
    while (j < end && j - i < 5) {
      const digit = hexValue(text.charCodeAt(j));
      if (digit < 0) break;
      value = value * 16 + digit;
      j++;
    }
    if (j < end && text.charCodeAt(j) === 46) {
      // An embedded IPv4 tail, as in ::ffff:10.0.0.1, fills the last two groups.
      if (count > 6) return false;
      const v4 = parseIPv4(text, i, end);
      if (v4 < 0) return false;
      groups[count++] = v4 >>> 16;
      groups[count++] = v4 & 0xffff;
      i = end;
      break;
    }
    const length = j - i;
    if (length === 0 || length > 4) return false;
    groups[count++] = value;
    if (j === end) {
      i = end;
      break;
    }
    if (text.charCodeAt(j) !== 58) return false;
    j++;
    if (j < end && text.charCodeAt(j) === 58) {
      if (gap >= 0) return false;
      gap = count;
      j++;
    } else if (j === end) {
      return false;
    }
    i = j;
  }
  if (gap < 0) return count === 8;
  if (count === 8) return false;
  const tail = count - gap;
  for (let k = 0; k < tail; k++) groups[7 - k] = groups[count - 1 - k] ?? 0;
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  return true;
}

/**
 * Parses an address into `scratchWords` and returns its family. IPv4-mapped IPv6 addresses
 * (::ffff:a.b.c.d) count as IPv4, as they do for the JVM's InetAddress that AWS's matcher uses.
 */
function parseAddress(text: string, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    if (text.charCodeAt(i) === 58) {
      if (!parseIPv6(text, start, end)) return NOT_AN_IP;
      const g = scratchGroups;
      const words = scratchWords;
      for (let k = 0; k < 4; k++) words[k] = (((g[2 * k] ?? 0) << 16) | (g[2 * k + 1] ?? 0)) >>> 0;
      if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) {
        words[0] = words[3] ?? 0;
        return V4;
      }
      return V6;
    }
  }
  const v4 = parseIPv4(text, start, end);
  if (v4 < 0) return NOT_AN_IP;
  scratchWords[0] = v4;
  return V4;
}

/** The family (4 or 6) of an IP address in text, or undefined; exported for tests. */
export function ipFamily(text: string): 4 | 6 | undefined {
  const family = parseAddress(text, 0, text.length);
  return family === V4 ? 4 : family === V6 ? 6 : undefined;
}

function maskFor(bits: number): number {
  if (bits <= 0) return 0;
  if (bits >= 32) return 0xffffffff;
  return (0xffffffff << (32 - bits)) >>> 0;
}

/**
 * Compiles "10.0.0.0/24" or "2001:db8::/32"; host bits below the prefix are ignored, as AWS
 * does. Calls `fail` (which throws) with the reason when the block is malformed.
 */
export function compileCidr(text: string, fail: (reason: string) => never): StringTest {
  const slash = text.lastIndexOf("/");
  if (slash < 0) {
    return fail(`"${text}" is not a CIDR block: expected an address, "/" and a prefix length`);
  }
  const lengthText = text.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(lengthText)) {
    return fail(`"${text}" has an invalid prefix length "${lengthText}"`);
  }
  let bits = Number(lengthText);
  const family = parseAddress(text, 0, slash);
  if (family === NOT_AN_IP) {
    return fail(`"${text}" does not start with a valid IPv4 or IPv6 address`);
  }
  if (family === V4 && text.slice(0, slash).includes(":")) {
    // ::ffff:10.0.0.0/120 is the IPv4 block 10.0.0.0/24.
    if (bits > 128) return fail(`"${text}" has a prefix length above 128`);
    bits = Math.max(0, bits - 96);
  }
  if (family === V4) {
    if (bits > 32) return fail(`"${text}" has a prefix length above 32`);
    const mask = maskFor(bits);
    const network = ((scratchWords[0] ?? 0) & mask) >>> 0;
    return (value) =>
      parseAddress(value, 0, value.length) === V4 &&
      ((scratchWords[0] ?? 0) & mask) >>> 0 === network;
  }
  if (bits > 128) return fail(`"${text}" has a prefix length above 128`);
  const [m0, m1, m2, m3] = [0, 1, 2, 3].map((k) => maskFor(bits - 32 * k)) as [
    number,
    number,
    number,
    number,
  ];
  const w = scratchWords;
  const n0 = ((w[0] ?? 0) & m0) >>> 0;
  const n1 = ((w[1] ?? 0) & m1) >>> 0;
  const n2 = ((w[2] ?? 0) & m2) >>> 0;
  const n3 = ((w[3] ?? 0) & m3) >>> 0;
  return (value) =>
    parseAddress(value, 0, value.length) === V6 &&
    ((w[0] ?? 0) & m0) >>> 0 === n0 &&
    ((w[1] ?? 0) & m1) >>> 0 === n1 &&
    ((w[2] ?? 0) & m2) >>> 0 === n2 &&
    ((w[3] ?? 0) & m3) >>> 0 === n3;
}
