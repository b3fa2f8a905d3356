import { WINDOWS_TO_IANA_MAP } from "windows-iana";
import { supportsZone } from "./time";

/*
 * Zone names as feeds write them, to IANA zones. Apart from time.ts so that only ICS reading
 * loads the Windows table (Google answers with IANA names already).
 */

/**
 * The IANA zone as Intl knows it, or undefined for names it does not (made-up ids). Windows
 * names that Outlook and Exchange write ("W. Europe Standard Time") map to their IANA zone
 * through CLDR's table (windows-iana).
 */
export function knownTimeZone(tzid: string): string | undefined {
  // Every time of a feed is placed through here: a feed of 40,000 events names one or two
  // zones, and looking each up again made placement the slowest part of reading it.
  const cached = knownZones.get(tzid);
  if (cached !== undefined) return cached ?? undefined;
  const zone = lookUpZone(tzid);
  // Bounded: a hostile feed may name a new zone on every line.
  if (knownZones.size < 1000) knownZones.set(tzid, zone ?? null);
  return zone;
}

const knownZones = new Map<string, string | null>();

function lookUpZone(tzid: string): string | undefined {
  // No zone name is this long; the pattern below would rescan a long one from every letter.
  if (tzid.length > 128) return undefined;
  const candidates = [tzid, tzid.replace(/^\/+/, "")];
  // Some producers prefix the IANA id with their own path: "/mozilla.org/20050126_1/Europe/Paris".
  const tail = tzid.match(/([A-Za-z_]+\/[A-Za-z_+-]+(?:\/[A-Za-z_+-]+)?)$/);
  if (tail?.[1]) candidates.push(tail[1]);
  const windows = windowsZones().get(tzid.trim());
  if (windows) candidates.push(windows);
  for (const candidate of candidates) {
    if (supportsZone(candidate)) return candidate;
  }
  return undefined;
}

let byWindowsName: Map<string, string> | undefined;

/**
 * CLDR's table, read for territory "001": the zone that defines each Windows name (findIana
 * would list every territory's zones and their aliases, in no promised order).
 */
function windowsZones(): Map<string, string> {
  byWindowsName ??= new Map(
    WINDOWS_TO_IANA_MAP.filter((entry) => entry.territory === "001").flatMap((entry) =>
      entry.iana[0] ? [[entry.windowsName, entry.iana[0]] as const] : [],
    ),
  );
  return byWindowsName;
}
