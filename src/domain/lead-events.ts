// The payload comes in the query string as qs-nested or JSON text, and from GraphQL as an object.
import { z } from 'zod';
import type { Prisma } from '../db/client.ts';
import type { ScopedDb } from '../db/scoped.ts';
import { apiError } from '../errors.ts';
import { HTTP_URL_PATTERN } from './http-url.ts';
import { DEFAULT_TEXT_MAX_LENGTH, INT32, rowIdFromText, textMaxLength } from './input-limits.ts';
import { parseRecord } from './input-records.ts';
import { publishCommitted, recordEvent, type RecordEventPublisher } from './record-events.ts';
import { parseUrl } from '../lib/parse-url.ts';

/** The spec lists no services, so any slug is accepted and a new messaging service needs no release. */
const SERVICE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** `sentDate` carries no zone; the platform's dealerships keep Sydney time. */
const SENT_DATE_TIME_ZONE = 'Australia/Sydney';

const SHORT_TEXT = DEFAULT_TEXT_MAX_LENGTH;
const LONG_TEXT = textMaxLength('description');
const URL_TEXT = textMaxLength('linkStopCommunication');
const DAY_MS = 86_400_000;

const LEAD_ID_RULE = 'must be a lead id (a positive whole number)';

/** Blank counts as absent: a query string cannot send null. */
const optionalText = (max: number) =>
  z
    .string({ error: 'must be text' })
    .meta({ maxLength: max })
    .nullish()
    .transform((value) => (value == null || value.trim() === '' ? null : value.trim()))
    .refine((value) => value === null || value.length <= max, `must be at most ${max} characters`);

const optionalUrl = optionalText(URL_TEXT)
  .refine((value) => value === null || isHttpUrl(value), 'must be an http(s) URL')
  .meta({ pattern: HTTP_URL_PATTERN });

const leadIdSchema = z
  .union([z.number(), z.string()], { error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : LEAD_ID_RULE) })
  .transform((value, context) => {
    const id = rowIdFromText(String(value).trim());
    if (id === null || id < 1) {
      context.addIssue({ code: 'custom', message: LEAD_ID_RULE });
      return z.NEVER;
    }
    return id;
  })
  .meta({
    anyOf: [
      { type: 'integer', minimum: 1, maximum: INT32.max },
      { type: 'string', pattern: '^[1-9][0-9]{0,8}$' },
    ],
    'x-references': 'a lead of the key’s dealerships (404 no_lead_found otherwise)',
  });

/** Days 1 to 28 only, so every generated example is real; the parser takes any real date. */
const SENT_DATE_PATTERN =
  '^(?:19|20)[0-9]{2}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9])?$';

const sentDateSchema = optionalText(64)
  .meta({ pattern: SENT_DATE_PATTERN })
  .transform((value, context) => {
    if (value === null) return null;
    const date = parseSentDate(value);
    if (!date) {
      context.addIssue({ code: 'custom', message: 'must be a date-time such as 2026-11-20 14:30:00 (Sydney time unless a zone is given)' });
      return z.NEVER;
    }
    return date;
  });

const leadEventSchema = z.object({
  leadId: leadIdSchema,
  // Fields not listed are ignored: the services that still call this deprecated route send more.
  messageDetail: z
    .object(
      {
        contactType: optionalText(SHORT_TEXT),
        description: optionalText(LONG_TEXT),
        sentDate: sentDateSchema,
        sentBy: optionalText(SHORT_TEXT),
        linkStopCommunication: optionalUrl,
        linkReplyAsAssistant: optionalUrl,
      },
      { error: (issue) => (issue.input === undefined || issue.input === null ? 'is required' : 'must be an object') },
    )
    .transform((detail) => ({
      contact_type: detail.contactType,
      description: detail.description,
      sent_date: detail.sentDate,
      sent_by: detail.sentBy,
      link_stop_communication: detail.linkStopCommunication,
      link_reply_as_assistant: detail.linkReplyAsAssistant,
    })),
});

export const noLeadFound = () => apiError('NOT_FOUND', 'no_lead_found', 'No lead found with that leadId.');

export const leadEventRequest = z.object({
  service: z
    .string()
    .meta({ pattern: SERVICE_PATTERN.source, examples: ['sms'] })
    .transform((service) => service.trim().toLowerCase())
    .refine((service) => SERVICE_PATTERN.test(service), 'must be a service name of 1 to 40 letters, digits, "-" or "_"')
    .describe('The messaging service: 1 to 40 lower-case letters, digits, "-" or "_" (compared without regard to case).'),
  data: leadEventSchema.describe(
    'The lead and the message detail: data[leadId]=…&data[messageDetail][contactType]=… in the query string, or JSON text.',
  ),
});

function isHttpUrl(text: string): boolean {
  const url = parseUrl(text);
  if (!url) return false;
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

const ZONE_OFFSET = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

function zoneOffsetMs(instantMs: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }).formatToParts(new Date(instantMs));
  const [, sign, hours, minutes, seconds] = ZONE_OFFSET.exec(parts.find((part) => part.type === 'timeZoneName')?.value ?? '') ?? [];
  return sign ? (sign === '-' ? -1 : 1) * ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds ?? 0)) * 1000 : 0;
}

/** A wall-clock time that happens twice when daylight saving ends is the first of the two. */
export function parseSentDate(text: string): Date | null {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi, s, ms, zone] = match;
  const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0), Number((ms ?? '0').padEnd(3, '0')));
  const check = new Date(wall);
  // Date.UTC rolls 30 February over into March; a real date reads back unchanged.
  if (check.toISOString().slice(0, 19) !== `${y}-${mo}-${d}T${h}:${mi}:${s ?? '00'}`) return null;
  if (zone) {
    if (zone.toUpperCase() === 'Z') return check;
    const [, sign, hh, mm] = /^([+-])(\d{2}):?(\d{2})$/.exec(zone) ?? [];
    const offset = (Number(hh) * 60 + Number(mm)) * 60_000 * (sign === '-' ? -1 : 1);
    return new Date(wall - offset);
  }
  // Offsets change at most once around a day, so the one before and after are the only candidates.
  const before = zoneOffsetMs(wall - DAY_MS, SENT_DATE_TIME_ZONE);
  const after = zoneOffsetMs(wall + DAY_MS, SENT_DATE_TIME_ZONE);
  const candidates = [wall - before, wall - after].filter((instant) => zoneOffsetMs(instant, SENT_DATE_TIME_ZONE) === wall - instant);
  return new Date(candidates.length > 0 ? Math.min(...candidates) : wall - before);
}

export async function createLeadEvent(
  db: ScopedDb,
  events: RecordEventPublisher,
  input: z.input<typeof leadEventRequest>,
  now: Date,
  query: { include?: Prisma.LeadEventInclude; select?: Prisma.LeadEventSelect } = {},
) {
  const { service, data } = parseRecord(leadEventRequest, input, '');
  const lead = await db.lead.findUnique({ where: { id: data.leadId }, select: { id: true, dealership_id: true } });
  if (!lead) throw noLeadFound();
  const { created, recorded } = await db.$transaction(async (tx) => {
    const created = await tx.leadEvent.create({ ...query, data: { ...data.messageDetail, service, lead_id: lead.id, created_at: now } });
    const recorded = await recordEvent(tx, { type: 'lead_event.created', dealershipId: lead.dealership_id, recordId: created.id }, now);
    return { created, recorded };
  });
  publishCommitted(events, [recorded]);
  return created;
}
