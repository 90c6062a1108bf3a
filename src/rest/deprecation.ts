// Sofa's routes cannot be deprecated: a path's days, answered as `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) headers.
import { isoCalendarDay } from '../domain/dates.ts';

type IsoDay = `${number}-${number}-${number}`;

export interface RouteDeprecation {
  since: IsoDay;
  /** The first day the path may stop answering (`Sunset`): after `since`. */
  sunset: IsoDay;
  /** A page saying what to use instead: `Link: <…>; rel="deprecation"`. */
  link?: string;
}

function dayOf(text: string): Date {
  const day = isoCalendarDay(text);
  if (!day) throw new Error(`"${text}" is not a day written YYYY-MM-DD`);
  return day;
}

/** The header values a deprecated route answers with (its days at 00:00 UTC). */
export function deprecationHeaders(deprecation: RouteDeprecation) {
  return {
    deprecation: `@${dayOf(deprecation.since).getTime() / 1000}`,
    sunset: dayOf(deprecation.sunset).toUTCString(),
    ...(deprecation.link ? { link: `<${deprecation.link}>; rel="deprecation"` } : {}),
  };
}

export function deprecationHeaderDocs(deprecation: RouteDeprecation): Record<string, Record<string, unknown>> {
  const values = deprecationHeaders(deprecation);
  return {
    Deprecation: {
      description: `RFC 9745: the operation is deprecated since ${deprecation.since}; the value is \`@\` and the Unix time of that day.`,
      schema: { type: 'string', pattern: '^@-?[0-9]+$' },
      example: values.deprecation,
    },
    Sunset: {
      description: `RFC 8594: from this HTTP date (${deprecation.sunset}) the operation may stop answering.`,
      schema: { type: 'string' },
      example: values.sunset,
    },
    ...(values.link
      ? {
          Link: { description: 'Where to read what to use instead (rel="deprecation").', schema: { type: 'string' }, example: values.link },
        }
      : {}),
  };
}
