// Phone numbers in one normal form (E.164, e.g. +61412345678), used for leads, contacts and the
// call-tracking numbers phone webhooks report. Numbers without a country code are Australian.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** E.164 for a valid number (04xx xxx xxx, (03) 9xxx xxxx, +61 4xx…, 1300/1800 numbers…), else null. */
export function normalizePhone(raw: string): string | null {
  const text = raw.trim();
  if (!/^[+\d\s().-]{6,20}$/.test(text)) return null;
  const parsed = parsePhoneNumberFromString(text, 'AU');
  if (!parsed?.isValid()) return null;
  return parsed.number;
}

/**
 * Numbers every one of which normalizePhone accepts, as a JSON Schema pattern: mobiles 0400–0439 and
 * the 02 0–2 and 03 0–2 landline ranges, national or +61, with or without the usual spaces. It is
 * what the OpenAPI document shows a client generating values; normalizePhone accepts far more
 * (test/input-records.test.ts holds the two together).
 */
export const PHONE_EXAMPLE_PATTERN = '^(?:(?:\\+61 ?|0)4[0-3][0-9] ?[0-9]{3} ?[0-9]{3}|(?:\\+61 ?|0)[23] ?[0-2][0-9]{3} ?[0-9]{4})$';
