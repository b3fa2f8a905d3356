export { type Agenda, type AgendaSource, renderAgenda } from "./agenda";
export {
  type CalendarInput,
  type CalendarOutput,
  calendar,
  calendarInput,
  calendarOutput,
  calendarToolset,
  resolveWindow,
} from "./calendar";
export {
  type CalendarCapability,
  type CalendarSettings,
  calendarCapability,
  calendarSettings,
  googleCalendarCapability,
} from "./capability";
export { type CalendarEvent, calendarEvent, mergeEvents } from "./events";
export {
  CALENDAR_READONLY_SCOPE,
  GOOGLE_CALENDAR_CREDENTIALS,
  listGoogleEvents,
  readServiceAccountKey,
  type ServiceAccountKey,
  ServiceAccountTokens,
  serviceAccountKey,
  serviceAccountTokens,
  signServiceAccountJwt,
} from "./google";
export {
  type IcsCalendar,
  type IcsEvent,
  IcsFormatError,
  occurrencesInWindow,
  parseIcs,
} from "./ics";
export { fetchIcsFeed, ICS_MAX_BYTES } from "./ics-feed";
export { readRule } from "./recurrence";
