// Calendar dates as the spec's samples write them (day/month/year: rego_expiry, compliance_date,
// build_date, a lead's dob). Parsing is strict: a date that does not exist is an error naming the
// field, never rolled over into the next month as `new Date(2026, 1, 31)` would.
import { invalidInput } from '../errors.ts';

const DAY_MONTH_YEAR = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
/** ISO 8601 year-month-day, accepted too: it is what responses carry, so a record can be sent back. */
const YEAR_MONTH_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The date at 00:00 UTC, or null when the numbers do not name a real day of the Gregorian calendar. */
export function calendarDate(year: number, month: number, day: number): Date | null {
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0-99 to 1900-1999; setting the full year undoes that.
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date : null;
}

/** "2027-06-30" (ISO 8601 year-month-day, nothing else) as a Date at 00:00 UTC, or null. */
export function isoCalendarDay(text: string): Date | null {
  const match = YEAR_MONTH_DAY.exec(text);
  return match ? calendarDate(Number(match[1]), Number(match[2]), Number(match[3])) : null;
}

/**
 * "31/12/2026" (day/month/four-digit year, one or two digits for day and month) or "2026-12-31",
 * as a Date at 00:00 UTC. Anything else, including 31/02/2026 and two-digit years, is a 422 naming
 * `field`.
 */
export function parseDayMonthYear(text: string, field: string): Date {
  const trimmed = text.trim();
  const dmy = DAY_MONTH_YEAR.exec(trimmed);
  const ymd = dmy ? null : YEAR_MONTH_DAY.exec(trimmed);
  if (!dmy && !ymd) {
    throw invalidInput(field, `must be a date written day/month/year, e.g. "31/12/2026" (or "2026-12-31"), got "${text}"`);
  }
  const [day, month, year] = dmy ? [dmy[1], dmy[2], dmy[3]] : [ymd?.[3], ymd?.[2], ymd?.[1]];
  const date = calendarDate(Number(year), Number(month), Number(day));
  if (!date) throw invalidInput(field, `is not a real calendar date, got "${text}"`);
  return date;
}
