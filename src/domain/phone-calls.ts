// Providers retry deliveries, so one call must be recorded once however often it arrives.
import { hash } from 'node:crypto';
import { z } from 'zod';
import type { Actor } from '../auth/api-keys.ts';
import { isUniqueViolation } from '../db/client.ts';
import type { DbClients, ScopedDb } from '../db/scoped.ts';
import { invalidInput } from '../errors.ts';
import { NON_BLANK, fieldRule, parseRecord } from './input-records.ts';
import { normalizePhone } from './phone.ts';
import { publishCommitted, recordEvent, type RecordEvent, type RecordEventPublisher } from './record-events.ts';

const CAR_ATTRIBUTION_WINDOW_MS = 30 * 86_400_000;
const DEDUPE_WINDOW_MS = 60_000;

export const phoneCallReport = z.object({
  // storedNumber refuses blank text; the pattern says so to the OpenAPI document.
  called_number: z
    .string()
    .meta({ pattern: NON_BLANK.source })
    .transform(fieldRule(storedNumber))
    .describe("The number dialled: a location's tracking number."),
  caller_number: z.string().meta({ pattern: NON_BLANK.source }).transform(fieldRule(storedNumber)).describe('The number that called.'),
  call_id: z.string().nullish().describe("The provider's id of the call: repeated deliveries with it are recognised exactly."),
  CallSid: z.string().nullish().describe("Twilio's name for call_id (form posts); call_id wins when both are sent."),
});

export type PhoneCallReceipt = { status: 'accepted' | 'duplicate'; id: number };

/** A number that is not valid is still kept (withheld callers arrive as "anonymous"); only E.164 numbers match. */
function storedNumber(raw: string, field: string): { value: string; e164: boolean } {
  const text = raw.trim();
  if (text === '') throw invalidInput(field, 'is required');
  const e164 = normalizePhone(text);
  if (e164) return { value: e164, e164: true };
  const digits = text.replace(/\D/g, '');
  if (digits !== '') return { value: `${text.startsWith('+') ? '+' : ''}${digits}`, e164: false };
  return { value: text.toLowerCase(), e164: false };
}

function sha256(parts: readonly (string | number)[]): string {
  return hash('sha256', parts.join('\n'), 'hex');
}

/** Per API key, so one key can never pre-empt the calls another reports. */
function dedupeKeys(actor: Actor, called: string, caller: string, callId: string | null, now: Date): { key: string; earlier: string[] } {
  if (callId !== null) return { key: sha256(['call', actor.apiKeyId, callId]), earlier: [] };
  const bucket = Math.floor(now.getTime() / DEDUPE_WINDOW_MS);
  const windowKey = (b: number) => sha256(['window', actor.apiKeyId, called, caller, b]);
  // A retry just after a window boundary still finds the first delivery in the window before.
  return { key: windowKey(bucket), earlier: [windowKey(bucket - 1)] };
}

async function attributedCarId(db: ScopedDb, dealershipId: number, caller: string, now: Date): Promise<number | null> {
  const lead = await db.lead.findFirst({
    where: {
      dealership_id: dealershipId,
      car: { dealership_id: dealershipId },
      created_at: { gte: new Date(now.getTime() - CAR_ATTRIBUTION_WINDOW_MS), lte: now },
      OR: [{ phone: caller }, { contact: { phone: caller } }],
    },
    orderBy: [{ created_at: 'desc' }, { id: 'desc' }],
    select: { car_id: true },
  });
  return lead?.car_id ?? null;
}

/** The answer does not say whether a dealership matched, so a key cannot probe other dealerships' numbers. */
export async function recordPhoneCall(
  clients: DbClients & { events: RecordEventPublisher },
  actor: Actor,
  input: z.input<typeof phoneCallReport>,
  now: Date,
): Promise<PhoneCallReceipt> {
  const { db, unscopedDb } = clients;
  const { called_number: called, caller_number: caller, call_id, CallSid } = parseRecord(phoneCallReport, input, '');
  const callId = (call_id ?? CallSid)?.trim() || null;

  const { key, earlier } = dedupeKeys(actor, called.value, caller.value, callId, now);
  // Unscoped, as a call that matched no dealership is no dealership's row; keys carry the reporter's id, so only its own are found.
  const seen = await unscopedDb.phoneCall.findFirst({ where: { dedupe_key: { in: [key, ...earlier] } }, select: { id: true } });
  if (seen) return { status: 'duplicate', id: seen.id };

  const location = called.e164
    ? await db.location.findUnique({ where: { tracking_phone: called.value }, select: { id: true, dealership_id: true } })
    : null;
  const carId = location && caller.e164 ? await attributedCarId(db, location.dealership_id, caller.value, now) : null;

  try {
    const { call, event } = await db.$transaction(async (tx) => {
      const call = await tx.phoneCall.create({
        data: {
          dedupe_key: key,
          called_number: called.value,
          caller_number: caller.value,
          dealership_id: location?.dealership_id ?? null,
          location_id: location?.id ?? null,
          car_id: carId,
          received_at: now,
        },
        select: { id: true },
      });
      const event: RecordEvent | null = location
        ? await recordEvent(tx, { type: 'phone_call.created', dealershipId: location.dealership_id, recordId: call.id }, now)
        : null;
      return { call, event };
    });
    publishCommitted(clients.events, [event]);
    return { status: 'accepted', id: call.id };
  } catch (error) {
    // A concurrent delivery of the same call won the unique dedupe_key: this one is the repeat.
    if (!isUniqueViolation(error)) throw error;
    const first = await unscopedDb.phoneCall.findUnique({ where: { dedupe_key: key }, select: { id: true } });
    if (!first) throw error;
    return { status: 'duplicate', id: first.id };
  }
}
