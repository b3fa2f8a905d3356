import type { CapabilityDetector } from "@toolbus/core/capabilities";
import type { SecretSource } from "@toolbus/core/outbound";
import * as z from "zod";
import { GOOGLE_CALENDAR_CREDENTIALS, readServiceAccountKey } from "./google";

/*
 * The calendar's settings and capability, apart from the tool: every tool's function loads
 * the built-in capability detectors, and must not load ical.js with them.
 */

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/** `tools.calendar` in the stage configuration. */
export const calendarSettings = z.strictObject({
  calendarId: z
    .string()
    .trim()
    .min(1)
    .max(320)
    .default("primary")
    .describe("The Google calendar to read: its id (an email-like address) or primary."),
  impersonate: z
    .email()
    .optional()
    .describe("A Workspace user the service account acts as (domain-wide delegation)."),
  apiBaseUrl: httpUrl.default("https://www.googleapis.com/calendar/v3"),
  tokenUrl: httpUrl.default("https://oauth2.googleapis.com/token"),
  icsUrls: z.array(httpUrl).max(20).default([]).describe("Public iCalendar feeds to read."),
});
export type CalendarSettings = z.infer<typeof calendarSettings>;

/** Whether the stage can run the calendar tool, and from what; never the secret's value. */
export interface CalendarCapability {
  available: boolean;
  reason?: string;
  source?: string;
}

/**
 * `google_calendar` is there when the service-account key is set and readable, or when at
 * least one ICS feed is configured. `settings` is the raw `tools.calendar` section.
 */
export function calendarCapability(settings: unknown, secret: SecretSource): CalendarCapability {
  const parsed = calendarSettings.safeParse(settings ?? {});
  if (!parsed.success) {
    return {
      available: false,
      reason: "tools.calendar is not configured correctly on this stage.",
      source: "config:tools.calendar",
    };
  }
  const sources: string[] = [];
  const problems: string[] = [];
  const raw = secret(GOOGLE_CALENDAR_CREDENTIALS);
  if (raw?.trim()) {
    const key = readServiceAccountKey(raw);
    if (key.ok) sources.push(`secret:${GOOGLE_CALENDAR_CREDENTIALS}`);
    else problems.push(key.reason);
  }
  if (parsed.data.icsUrls.length > 0) sources.push("config:tools.calendar.icsUrls");
  if (sources.length > 0) return { available: true, source: sources.join(", ") };
  return {
    available: false,
    reason:
      problems[0] ??
      `Neither ${GOOGLE_CALENDAR_CREDENTIALS} nor tools.calendar.icsUrls is set on this stage.`,
    source: `secret:${GOOGLE_CALENDAR_CREDENTIALS}, config:tools.calendar.icsUrls`,
  };
}

/** The `google_calendar` capability, ready for a stage's list of detectors. */
export const googleCalendarCapability: CapabilityDetector = {
  name: "google_calendar",
  description: "A Google service account or public ICS feeds for the calendar tool.",
  detect: ({ config, secret }) => calendarCapability(config.tools.calendar, secret),
};
