import type { CalendarEvent } from "./events";
import { truncate } from "./events";
import { type CivilDateTime, civilFromUtcMs, civilInZone, DAY_MS } from "./time";

const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

export interface AgendaSource {
  source: "google" | "ics";
  name: string;
  ok: boolean;
  events: number;
  error?: string;
}

export interface Agenda {
  events: CalendarEvent[];
  window: { timeMin: string; timeMax: string };
  sources: AgendaSource[];
  hasMore: boolean;
  notes: string[];
}

/**
 * The Markdown an agent reads: events grouped under their (UTC) day, times in UTC and, for an
 * event scheduled in another zone, in that zone too, so nobody has to convert in their head.
 * Written by hand rather than with Intl so the text is the same on every runtime.
 */
export function renderAgenda(agenda: Agenda): string {
  const from = Date.parse(agenda.window.timeMin);
  const to = Date.parse(agenda.window.timeMax);
  const count = `${agenda.events.length}${agenda.hasMore ? "+" : ""}`;
  const lines = [
    `Calendar events from ${dateTime(from)} to ${dateTime(to)} (UTC): ${count} ` +
      `event${agenda.events.length === 1 ? "" : "s"}.`,
  ];
  if (agenda.events.length === 0) {
    lines.push("", "Nothing is scheduled in this window.");
  }
  let heading = "";
  for (const event of agenda.events) {
    const day = dayName(startOf(event));
    if (day !== heading) {
      heading = day;
      lines.push("", `### ${day}`);
    }
    lines.push(`- ${when(event)} — ${what(event)}`);
    if (event.description) {
      lines.push(`  ${escapeMarkdown(truncate(event.description.replace(/\s+/g, " "), 200))}`);
    }
  }
  if (agenda.hasMore) {
    lines.push(
      "",
      "More events fall in this window: narrow time_min/time_max or raise max_results.",
    );
  }
  const failed = agenda.sources.filter((source) => !source.ok);
  if (agenda.notes.length > 0 || failed.length > 0) {
    lines.push("", "Notes:");
    for (const source of failed) {
      lines.push(`- Not included: ${source.error ?? `${source.name} failed.`}`);
    }
    for (const note of agenda.notes) lines.push(`- ${note}`);
  }
  return lines.join("\n");
}

function startOf(event: CalendarEvent): number {
  return Date.parse(event.allDay ? `${event.start}T00:00:00Z` : event.start);
}

function when(event: CalendarEvent): string {
  const start = startOf(event);
  const end = Date.parse(event.allDay ? `${event.end}T00:00:00Z` : event.end);
  if (event.allDay) {
    const days = Math.round((end - start) / DAY_MS);
    return days > 1 ? `All day, until ${dayName(end - DAY_MS)}` : "All day";
  }
  const sameDay = dayName(start) === dayName(end);
  const endText = end === start ? "" : `–${sameDay ? time(civilFromUtcMs(end)) : dateTime(end)}`;
  let text = `${time(civilFromUtcMs(start))}${endText} UTC`;
  const zone = event.timeZone;
  if (zone && zone !== "UTC" && zone !== "Etc/UTC") {
    const localStart = time(civilInZone(start, zone));
    const localEnd = end === start ? "" : `–${time(civilInZone(end, zone))}`;
    text += ` (${localStart}${localEnd} ${zone})`;
  }
  return text;
}

function what(event: CalendarEvent): string {
  const title = escapeMarkdown(event.title);
  const parts = [event.url ? `[**${title}**](${linkTarget(event.url)})` : `**${title}**`];
  if (event.location) parts.push(escapeMarkdown(event.location.replace(/\s+/g, " ")));
  return parts.join(" · ");
}

function dayName(ms: number): string {
  const c = civilFromUtcMs(ms);
  const weekday = WEEKDAYS[new Date(ms).getUTCDay()];
  return `${weekday} ${c.day} ${MONTHS[c.month - 1]} ${c.year}`;
}

function dateTime(ms: number): string {
  return `${dayName(ms)} ${time(civilFromUtcMs(ms))}`;
}

function time(c: CivilDateTime): string {
  return `${String(c.hour).padStart(2, "0")}:${String(c.minute).padStart(2, "0")}`;
}

/** Event text comes from strangers' calendars: keep it from turning into links or headings. */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`);
}

/** Parentheses or spaces would end a Markdown link early; angle brackets keep it whole. */
function linkTarget(url: string): string {
  const safe = url.replace(/</g, "%3C").replace(/>/g, "%3E");
  return /[()\s]/.test(safe) ? `<${safe}>` : safe;
}
