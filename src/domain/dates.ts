// Strict: a date that does not exist is an error, never rolled over as `new Date(2026, 1, 31)` would.
import { invalidInput } from '../errors.ts';

const DAY_MONTH_YEAR = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;
/** Accepted too: responses carry it, so a record can be sent back. */
const YEAR_MONTH_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function calendarDate(year: number, month: number, day: number): Date | null {
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC maps years 0-99 to 1900-1999; setting the full year undoes that.
  date.setUTCFullYear(year);
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date : null;
}

export function isoCalendarDay(text: string): Date | null {
  const match = YEAR_MONTH_DAY.exec(text);
  return match ? calendarDate(Number(match[1]), Number(match[2]), Number(match[3])) : null;
}

export function parseDayMonthYear(text: string, field: string): Date {
  const trimmed = text.trim();
  const dmy = DAY_MONTH_YEAR.exec(trimmed);
  const ymd = dmy ? null : YEAR_MONTH_DAY.exec(trimmed);
  if (!dmy && !ymd) throw invalidInput(field, `must be a date written day/month/year, e.g. "31/12/2026" (or "2026-12-31"), got "${text}"`);
  const [day, month, year] = dmy ? [dmy[1], dmy[2], dmy[3]] : [ymd?.[3], ymd?.[2], ymd?.[1]];
  const date = calendarDate(Number(year), Number(month), Number(day));
  if (!date) throw invalidInput(field, `is not a real calendar date, got "${text}"`);
  return date;
}

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

function yearsPattern(years: readonly number[], { leapOnly }: { leapOnly: boolean }): string {
  const wanted = new Set(years);
  const parts: string[] = [];
  for (const century of new Set(years.map((year) => Math.floor(year / 100)))) {
    const cc = String(century).padStart(2, '0');
    const inCentury = Array.from({ length: 100 }, (_, index) => century * 100 + index).filter((year) => !leapOnly || isLeapYear(year));
    if (inCentury.every((year) => wanted.has(year))) {
      if (!leapOnly) parts.push(`${cc}[0-9]{2}`);
      else parts.push(`${cc}(?:0[48]|[2468][048]|[13579][26])`, ...(isLeapYear(century * 100) ? [`${cc}00`] : []));
      continue;
    }
    for (let decade = century * 10; decade < century * 10 + 10; decade += 1) {
      const inDecade = Array.from({ length: 10 }, (_, index) => decade * 10 + index);
      if (!leapOnly && inDecade.every((year) => wanted.has(year))) parts.push(`${String(decade).padStart(3, '0')}[0-9]`);
      else parts.push(...inDecade.filter((year) => wanted.has(year)).map((year) => String(year).padStart(4, '0')));
    }
  }
  return parts.join('|');
}

/** Exactly the real days (29 February in leap years only), for the OpenAPI document. */
export function calendarDatePattern(firstYear: number, lastYear: number, { blank = false }: { blank?: boolean } = {}): string {
  const all = Array.from({ length: lastYear - firstYear + 1 }, (_, index) => firstYear + index);
  const years = yearsPattern(all, { leapOnly: false });
  const leapYears = yearsPattern(all.filter(isLeapYear), { leapOnly: true });
  // Day and month, by which days every month has, then 29 February of leap years.
  const dayMonth = (zero: string) => [
    `(?:${zero}[1-9]|1[0-9]|2[0-8])/(?:${zero}[1-9]|1[0-2])/(?:${years})`,
    `(?:29|30)/(?:${zero}1|${zero}[3-9]|1[0-2])/(?:${years})`,
    `31/(?:${zero}[13578]|1[02])/(?:${years})`,
    `29/${zero}2/(?:${leapYears})`,
  ];
  const iso = [
    `(?:${years})-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])`,
    `(?:${years})-(?:0[13-9]|1[0-2])-(?:29|30)`,
    `(?:${years})-(?:0[13578]|1[02])-31`,
    `(?:${leapYears})-02-29`,
  ];
  return `^(?:${[...(blank ? [''] : []), ...dayMonth('0?'), ...iso].join('|')})$`;
}
